"""``smartarray-agent check``: a Nagios/Icinga plugin, by the monitoring plugins' guidelines.

Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error, an unreadable input, a
CLI that cannot run or times out); one status line on standard output,
``SMARTARRAY STATE - reason | perfdata``; ``-w``/``--warning`` and ``-c``/``--critical`` for
the charge thresholds, ``-t``/``--timeout``, ``-h``/``--help`` and ``-V``/``--version`` as
plugins use them. The judgement is cli/plugin.py's.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

from typer import TyperException
from typer.core import TyperCommand

from smartarray_agent.cli import plugin
from smartarray_agent.cli.context import CommandContext, CommandError
from smartarray_agent.cli.options import (
    PROG,
    CliPath,
    ConfigFile,
    InputFile,
    LockFile,
    Simulate,
    Timeout,
    percent,
    version_option,
)


class PluginCommand(TyperCommand):
    """A usage error is UNKNOWN, exit 3, on standard output, as the plugin guidelines say."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except TyperException as error:  # what parsing raises: an unknown option, a bad value
            _unknown(f"usage: {error.format_message()} (see '{PROG} check -h')")


def check(
    warning: Annotated[float | None, percent(
        "-w", "--warning", "--charge-warning",
        help="WARNING below this backup power charge (%), where known (default: [check] "
             "charge_warning_percent, 90).")] = None,
    critical: Annotated[float | None, percent(
        "-c", "--critical", "--charge-critical",
        help="CRITICAL below this charge (%); also what counts as protected write cache "
             "(default: the interlock's threshold, 80).")] = None,
    input_file: InputFile = None,
    _version: Annotated[bool, version_option(f"{PROG} check", "-V", "--version")] = False,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage errors and
    timeouts too), one status line with the reason and perfdata."""
    context = CommandContext(config, simulate, cli, timeout, lock_file)
    settings = context.config
    thresholds = plugin.Thresholds(
        warning if warning is not None else settings.check.charge_warning_percent,
        critical if critical is not None
        else settings.check.charge_critical_percent
        if settings.check.charge_critical_percent is not None
        else settings.policy.battery_threshold_percent,
    )
    try:
        snapshot = context.read_snapshot(input_file)
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
