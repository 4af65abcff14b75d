"""``smartarray-agent check``: a Nagios/Icinga plugin, by the monitoring plugins' guidelines.

Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error, an unreadable input, a
CLI that cannot run or times out); one status line on standard output,
``SMARTARRAY STATE - reason | perfdata``; ``-w``/``--warning`` and ``-c``/``--critical`` for
the charge thresholds, ``-t``/``--timeout``, ``-h``/``--help`` and ``-V``/``--version`` as
plugins use them.
"""

from __future__ import annotations

from argparse import Namespace
from typing import NoReturn

from smartarray_agent.cli import plugin
from smartarray_agent.cli.command import Command, Parser, Version
from smartarray_agent.cli.context import CommandContext, CommandError, add_context_options
from smartarray_agent.cli.options import PERCENT, add_input


class PluginParser(Parser):
    """A usage error (an unknown option, a bad value) is UNKNOWN, exit 3, on stdout."""

    def error(self, message: str) -> NoReturn:
        _unknown(f"usage: {message} (see 'smartarray-agent check -h')")


def _arguments(parser: Parser) -> None:
    parser.add_argument(
        "-w", "--warning", "--charge-warning", type=PERCENT, metavar="PCT",
        help="WARNING below this backup power charge (%%), where known (default: [check] "
             "charge_warning_percent, 90).")
    parser.add_argument(
        "-c", "--critical", "--charge-critical", type=PERCENT, metavar="PCT",
        help="CRITICAL below this charge (%%); also what counts as protected write cache "
             "(default: the interlock's threshold, 80).")
    add_input(parser)
    parser.add_argument("-V", "--version", action=Version, program="smartarray-agent check",
                        help="Print the version.")
    add_context_options(parser)


def _check(args: Namespace) -> None:
    context = CommandContext.from_args(args)
    warning: float | None = args.warning
    critical: float | None = args.critical
    settings = context.config
    thresholds = plugin.Thresholds(
        warning if warning is not None else settings.check.charge_warning_percent,
        critical if critical is not None
        else settings.check.charge_critical_percent
        if settings.check.charge_critical_percent is not None
        else settings.policy.battery_threshold_percent,
    )
    try:
        snapshot = context.read_snapshot(args.input_file)
    except CommandError as error:
        _unknown(str(error))
    if snapshot.error is not None:
        _unknown(f"the saved output is a vendor error: {snapshot.error.message}")
    result = plugin.judge(snapshot, thresholds)
    print(result.line(plugin.summary(snapshot)))
    raise SystemExit(result.code)


def _unknown(message: str) -> NoReturn:
    print(f"SMARTARRAY UNKNOWN - {message}")
    raise SystemExit(plugin.UNKNOWN)


check = Command(
    "Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage errors and "
    "timeouts too), one status line with the reason and perfdata.",
    _check, _arguments, PluginParser)
