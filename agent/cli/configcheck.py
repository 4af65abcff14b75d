"""``smartarray-agent config check [FILE]``: validate a configuration file and the web
config it names."""

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.locations import CONFIG_FILE


def check(file: Annotated[Path | None, typer.Argument(
    metavar="FILE", help=f"The configuration file (default: {CONFIG_FILE}).")] = None) -> None:
    """Validate a configuration file FILE (default: the system file) and the web config it
    names: print 'file:line: key: problem' for each mistake and exit 2, or 'FILE: OK'.
    Without FILE and without the system file, say that the defaults apply (exit 0)."""
    from smartarray_agent.common.configfile import ConfigError
    from smartarray_agent.config import load_config
    from smartarray_agent.daemon.agent import web_security

    if file is None:
        file = Path(CONFIG_FILE)
        if not file.exists():
            print(f"{file}: no such file; the agent runs on its defaults")
            return
    try:
        loaded = load_config(file)
        web_security(loaded)
    except ConfigError as error:
        for problem in error.problems:
            print(problem)
        raise SystemExit(exitcodes.BAD_INPUT) from None
    for warning in loaded.warnings:
        print(f"{file}: warning: {warning}")
    print(f"{file}: OK")
