"""``smartarray-agent check``: a Nagios/Icinga plugin."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from smartarray_agent.cli import plugin
from smartarray_agent.cli.context import CommandContext, CommandError, with_context
from smartarray_agent.cli.options import InputOption


@with_context
def check(
    context: CommandContext,
    charge_warning: Annotated[
        float | None, typer.Option("--charge-warning", min=0, max=100,
                                   help="Warn below this backup power charge (%), where known "
                                        "(default: [check] charge_warning_percent, 90).")
    ] = None,
    charge_critical: Annotated[
        float | None, typer.Option("--charge-critical", min=0, max=100,
                                   help="Critical below this charge (%); also what counts as "
                                        "protected write cache (default: the interlock's "
                                        "threshold, 80).")
    ] = None,
    input_file: InputOption = None,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, one status line
    with perfdata."""
    settings = context.config
    thresholds = plugin.Thresholds(
        charge_warning if charge_warning is not None
        else settings.check.charge_warning_percent,
        charge_critical if charge_critical is not None
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
