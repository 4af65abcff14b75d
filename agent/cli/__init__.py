"""The ``smartarray-agent`` command line (argparse): every command is a
:class:`~smartarray_agent.cli.command.Command` (or a group of them) in its own module of this
package, registered here, in one table. Only the module of the command being run is imported
(``--help`` and completing a command name read the table)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from smartarray_agent.cli.command import Command, Group, Parser, Version

if TYPE_CHECKING:
    from typing import NoReturn

PROG = "smartarray-agent"
HELP = "Smart Array write cache and backup power: status, metrics and safe changes."
SHELLS = ("bash", "zsh", "fish")
# Set by the completion scripts: the arguments are the words typed, to be completed
# (cli/completion.py), not run.
COMPLETE = "_SMARTARRAY_AGENT_COMPLETE"


@dataclass(frozen=True)
class Entry:
    target: str  # "module:attribute", the Command or Group
    help: str  # its line in --help


COMMANDS: dict[str, Entry] = {
    "status": Entry("smartarray_agent.cli.status:status",
                    "Show each controller's cache, write-cache switches and backup power."),
    "check": Entry("smartarray_agent.cli.check:check",
                   "Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."),
    "set-cache-ratio": Entry("smartarray_agent.cli.change:set_cache_ratio",
                             "Set a controller's read/write cache ratio."),
    "write-cache": Entry("smartarray_agent.cli.change:write_cache",
                         "Turn no-battery, drive or logical drive write cache on or off."),
    "run": Entry("smartarray_agent.cli.agent:run",
                 "Collect in the background and serve Prometheus metrics."),
    "metrics": Entry("smartarray_agent.cli.agent:metrics",
                     "Collect once and print or write the metrics."),
    "serve": Entry("smartarray_agent.cli.serve:serve",
                   "Serve the metrics that 'run' publishes, without privileges."),
    "config": Entry("smartarray_agent.cli.agent:config_group",
                    "Check the agent's configuration file."),
    "simulate": Entry("smartarray_agent.cli.simulate:simulate",
                      "The bundled Smart Array CLI simulator."),
}


def load(name: str) -> Command | Group:
    """The command (or group) ``name`` of :data:`COMMANDS`, its module imported now."""
    module, _, attribute = COMMANDS[name].target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, Command | Group), COMMANDS[name].target
    return command


class _ShowCompletion(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        from smartarray_agent.cli.completion import script

        assert isinstance(values, str)
        print(script(values, PROG, COMPLETE), end="")
        parser.exit()


def _options(parser: Parser) -> None:
    parser.add_argument("--version", action=Version, program=PROG, help="Print the version.")
    parser.add_argument("--show-completion", action=_ShowCompletion, choices=SHELLS,
                        metavar="SHELL",
                        help="Print the completion script for SHELL (bash, zsh or fish).")


APP = Group(HELP, {name: entry.help for name, entry in COMMANDS.items()}, load, _options)


def main() -> None:
    try:
        if COMPLETE in os.environ:
            from smartarray_agent.cli.completion import complete

            complete(APP, PROG, sys.argv[1:])
        else:
            APP.start(PROG, sys.argv[1:])
    except (KeyboardInterrupt, EOFError):  # Ctrl-C, Ctrl-D: a line, not a traceback
        print("\nAborted!", file=sys.stderr)
        raise SystemExit(1) from None
