"""``smartarray-agent check``: a Nagios/Icinga plugin."""

from __future__ import annotations

from typing import Annotated

import typer

from smartarray_agent.cli import plugin as check
from smartarray_agent.cli.common import (
    CliPathOption,
    CliUnavailable,
    ConfigOption,
    SimulateOption,
    TimeoutOption,
    command_config,
    read_charge,
    read_controllers,
)
from smartarray_agent.cli.inputs import InputError, read_capture
from smartarray_agent.collectors.ssacli.collector import CollectionError
from smartarray_agent.collectors.ssacli.errors import ParseError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.config import Config
from smartarray_agent.model import Snapshot


def check_command(
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
    input_file: Annotated[
        str | None, typer.Option("--input", "-i", metavar="FILE",
                                 help="Judge saved CLI output instead of running the CLI.")
    ] = None,
    config: ConfigOption = None,
    simulate: SimulateOption = None,
    cli_path: CliPathOption = None,
    timeout: TimeoutOption = None,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, one status line
    with perfdata."""
    settings = command_config(config, simulate, cli_path, timeout)
    thresholds = check.Thresholds(
        charge_warning if charge_warning is not None
        else settings.check.charge_warning_percent,
        charge_critical if charge_critical is not None
        else settings.check.charge_critical_percent
        if settings.check.charge_critical_percent is not None
        else settings.policy.battery_threshold_percent,
    )
    try:
        snapshot = _snapshot(input_file, settings)
    except (CollectionError, InputError, ParseError, CliUnavailable) as error:
        typer.echo(f"SMARTARRAY UNKNOWN - {error}")
        raise typer.Exit(check.UNKNOWN) from None
    snapshot = read_charge(settings).overlay(snapshot)
    result = check.judge(snapshot, thresholds)
    typer.echo(result.line(check.summary(snapshot)))
    raise typer.Exit(result.code)


def _snapshot(input_file: str | None, settings: Config) -> Snapshot:
    if input_file is not None:
        snapshot = parse(read_capture(input_file))
        if snapshot.error is not None:
            raise InputError(f"the saved output is a vendor error: {snapshot.error.message}")
        return snapshot
    return read_controllers(settings.ssacli)

