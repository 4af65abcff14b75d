"""The ``smartarray-agent`` Typer app: every command and group (docs/layout.md). Typer reads
every command's signature at each start: the modules that declare commands keep their
annotations evaluated (no ``from __future__ import annotations``), or each would be compiled
at every start."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

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
    """Run the app. SIGTERM and SIGHUP end a command as Ctrl-C does, with exit 128 + the
    signal, after the vendor CLI it started is stopped (``run`` and ``serve`` set their own;
    a change being sent holds them off: write/signals.py); one the caller ignores (nohup)
    stays ignored, but for :func:`_heed_the_terminal`."""
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
    even with SIGINT ignored: a shell script's background job inherits it ignored, and so
    does what that job starts in a terminal of its own (pexpect, ``script``), which would run
    on to the vendor CLI's timeout however often it is told to stop."""
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
