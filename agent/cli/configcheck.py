"""``smartarray-agent config check [FILE]``: validate a configuration file and the web
config it names."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.config import DEFAULT_PATH, load_config
from smartarray_agent.configfile import ConfigError
from smartarray_agent.daemon.agent import web_security


def check(file: Annotated[Path, typer.Argument(
    metavar="FILE", help="The configuration file.")] = DEFAULT_PATH) -> None:
    """Validate a configuration file FILE (default: the system file) and the web config it
    names: print 'file:line: key: problem' for each mistake and exit 2, or 'FILE: OK'."""
    try:
        loaded = load_config(file)
        web_security(loaded)
    except ConfigError as error:
        for problem in error.problems:
            print(problem)
        raise SystemExit(exitcodes.BAD_INPUT) from None
    print(f"{file}: OK")
