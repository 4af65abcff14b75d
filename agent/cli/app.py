"""The ``smartarray-agent`` Typer app: every command and group, with its line in ``--help``.

Help and usage errors are click's plain text (no rich panels: the output goes to terminals,
logs and monitoring alike), ``-h`` is ``--help``, and a crash prints Python's own traceback.
Shell completion is typer's (``--install-completion``, ``--show-completion``).

Typer reads every command's signature at each start, to build the whole app. The modules
that declare commands therefore keep their annotations evaluated (no ``from __future__
import annotations``): as strings, each would be compiled and evaluated again at every
start of every command."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from smartarray_agent.cli import (
    change,
    check,
    configcheck,
    metrics,
    run,
    serve,
    simulate,
    status,
)
from smartarray_agent.cli.options import PROG, version_option
from smartarray_agent.common import confine

SETTINGS = {"help_option_names": ["-h", "--help"]}
# The name of the link to this program in the Nagios plugin directory: run by it, the
# program is `smartarray-agent check` (docs/nagios.md).
PLUGIN_NAME = "check_smartarray"

app = typer.Typer(name=PROG, no_args_is_help=True, context_settings=SETTINGS,
                  rich_markup_mode=None, pretty_exceptions_enable=False)


@app.callback()
def _program(_version: Annotated[bool, version_option(PROG, "--version")] = False) -> None:
    """Smart Array write cache and backup power: status, metrics and safe changes."""


app.command("status", short_help="Show each controller's cache, write-cache switches and "
                                 "backup power.")(status.status)
app.command("check", cls=check.PluginCommand,
            short_help="Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, "
                       "3 UNKNOWN.")(check.check)
app.command("set-cache-ratio",
            short_help="Set a controller's read/write cache ratio.")(change.set_cache_ratio)
app.command("write-cache", short_help="Turn no-battery, drive or logical drive write cache on "
                                      "or off.")(change.write_cache)
app.command("run", short_help="Collect in the background and serve Prometheus "
                              "metrics.")(run.run)
app.command("metrics", short_help="Collect once and print or write the metrics.")(
    metrics.metrics)
app.command("serve", short_help="Serve the metrics that 'run' publishes, without "
                                "privileges.")(serve.serve)

config = typer.Typer(help="Check the agent's configuration file.", no_args_is_help=True)
config.command("check", short_help="Validate a configuration file and the web config it "
                                   "names.")(configcheck.check)
app.add_typer(config, name="config")

simulator = typer.Typer(help="The bundled Smart Array CLI simulator.", no_args_is_help=True)
simulator.command("list")(simulate.list_scenarios)
simulator.command("run")(simulate.run)
simulator.command("reset")(simulate.reset)
simulator.command("ilo")(simulate.ilo)
simulator.command("charge")(simulate.charge)
app.add_typer(simulator, name="simulate")


def main() -> None:
    """Run the app. SIGTERM and SIGHUP end a command as Ctrl-C does (typer exits 130 on
    SIGINT): with exit 128 + the signal's number, after the vendor CLI it started is stopped
    (collectors/ssacli/run.py). ``run`` and ``serve`` set their own handlers; a change being
    sent holds them off (write/signals.py). A signal the caller ignores (nohup) stays
    ignored, but for a Ctrl-C from the terminal whose foreground the program leads
    (:func:`_heed_the_terminal`). As root, the program confines itself before its first
    vendor CLI (confine.py)."""
    confine.enable()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _exit_on_signal)
    _heed_the_terminal()
    if Path(sys.argv[0]).name == PLUGIN_NAME:
        app(prog_name=PROG, args=["check", *sys.argv[1:]])
    else:
        app(prog_name=PROG)


def _heed_the_terminal() -> None:
    """Let Ctrl-C stop the program when it leads its terminal's foreground process group,
    SIGINT ignored or not. A job a non-interactive shell starts in the background inherits
    SIGINT ignored, so that a Ctrl-C meant for the script does not stop it; a program such a
    job then starts in a terminal of its own (pexpect, ``script``) inherits that too, and would
    run on to the vendor CLI's timeout however often it is told to stop. Where the program does
    not lead the foreground group (a script's background job is in the script's group), an
    ignored SIGINT stays ignored."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or os.getpgrp() != os.getpid():
        return
    try:
        terminal = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:  # no controlling terminal: no Ctrl-C to heed
        return
    try:
        foreground = os.tcgetpgrp(terminal) == os.getpgrp()
    except OSError:
        foreground = False
    finally:
        os.close(terminal)
    if foreground:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def commands() -> Iterator[tuple[list[str], TyperCommand]]:
    """Every command with the words that name it, in ``--help``'s order (for what reads the
    whole tree: the manual page, the tests)."""

    def walk(group: TyperGroup, path: list[str]) -> Iterator[tuple[list[str], TyperCommand]]:
        for name, command in group.commands.items():
            if isinstance(command, TyperGroup):
                yield from walk(command, [*path, name])
            else:
                assert isinstance(command, TyperCommand), name
                yield [*path, name], command

    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    yield from walk(root, [])
