"""``smartarray-agent check``: a Nagios/Icinga plugin, by the monitoring plugins' guidelines.

Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error, an unreadable input, a
CLI that cannot run or times out); one status line on standard output,
``SMARTARRAY STATE - reason | perfdata``; ``-w``/``--warning`` and ``-c``/``--critical`` for
the charge thresholds, ``-t``/``--timeout``, ``-h``/``--help`` and ``-V``/``--version`` as
plugins use them.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand

from smartarray_agent.cli import plugin
from smartarray_agent.cli.context import CommandContext, CommandError, with_context
from smartarray_agent.cli.options import InputOption

# click's UsageError, which typer vendors in some versions and not in others; BadParameter
# is its subclass in all of them.
_UsageError: type[Exception] = typer.BadParameter.__mro__[1]


class PluginCommand(TyperCommand):
    """A usage error (an unknown option, a bad value) is UNKNOWN, exit 3, on stdout."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _UsageError as error:
            message = error.format_message()  # type: ignore[attr-defined]
            _unknown(f"usage: {message} (see 'smartarray-agent check -h')")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"smartarray-agent check {version('smartarray-agent')}")
        raise typer.Exit(plugin.OK)


@with_context
def check(
    context: CommandContext,
    warning: Annotated[
        float | None, typer.Option("-w", "--warning", "--charge-warning", min=0, max=100,
                                   metavar="PCT",
                                   help="WARNING below this backup power charge (%), where "
                                        "known (default: [check] charge_warning_percent, 90).")
    ] = None,
    critical: Annotated[
        float | None, typer.Option("-c", "--critical", "--charge-critical", min=0, max=100,
                                   metavar="PCT",
                                   help="CRITICAL below this charge (%); also what counts as "
                                        "protected write cache (default: the interlock's "
                                        "threshold, 80).")
    ] = None,
    input_file: InputOption = None,
    show_version: Annotated[
        bool, typer.Option("-V", "--version", callback=_print_version, is_eager=True,
                           help="Print the version.")
    ] = False,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage errors and
    timeouts too), one status line with the reason and perfdata."""
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
    snapshot = context.read_charge().overlay(snapshot)
    result = plugin.judge(snapshot, thresholds)
    typer.echo(result.line(plugin.summary(snapshot)))
    raise typer.Exit(result.code)


def _unknown(message: str) -> NoReturn:
    typer.echo(f"SMARTARRAY UNKNOWN - {message}")
    raise typer.Exit(plugin.UNKNOWN)
