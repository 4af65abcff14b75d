"""``smartarray-agent check``: a Nagios/Icinga plugin."""

from __future__ import annotations

from typing import Annotated

import typer

from smartarray_agent import check
from smartarray_agent.cli_common import (
    CliPathOption,
    CliUnavailable,
    SimulateOption,
    TimeoutOption,
    resolve_vendor_cli,
)
from smartarray_agent.collectors.ssacli.collector import CollectionError, SsacliCollector
from smartarray_agent.collectors.ssacli.errors import ParseError
from smartarray_agent.collectors.ssacli.lock import default_lock_path
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.inputs import InputError, read_capture
from smartarray_agent.model import Snapshot


def check_command(
    charge_warning: Annotated[
        float, typer.Option("--charge-warning", min=0, max=100,
                            help="Warn below this backup power charge (%), where known.")
    ] = check.Thresholds.charge_warning,
    charge_critical: Annotated[
        float, typer.Option("--charge-critical", min=0, max=100,
                            help="Critical below this charge (%); also what counts as "
                                 "protected write cache.")
    ] = check.Thresholds.charge_critical,
    input_file: Annotated[
        str | None, typer.Option("--input", "-i", metavar="FILE",
                                 help="Judge saved CLI output instead of running the CLI.")
    ] = None,
    simulate: SimulateOption = None,
    cli_path: CliPathOption = None,
    timeout: TimeoutOption = 60.0,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, one status line
    with perfdata."""
    thresholds = check.Thresholds(charge_warning, charge_critical)
    try:
        snapshot = _snapshot(input_file, simulate, cli_path, timeout)
    except (CollectionError, InputError, ParseError, CliUnavailable) as error:
        typer.echo(f"SMARTARRAY UNKNOWN - {error}")
        raise typer.Exit(check.UNKNOWN) from None
    result = check.judge(snapshot, thresholds)
    typer.echo(result.line(check.summary(snapshot)))
    raise typer.Exit(result.code)


def _snapshot(input_file: str | None, simulate: str | None, cli_path: str | None,
              timeout: float) -> Snapshot:
    if input_file is not None:
        snapshot = parse(read_capture(input_file))
        if snapshot.error is not None:
            raise InputError(f"the saved output is a vendor error: {snapshot.error.message}")
        return snapshot
    collector = SsacliCollector(resolve_vendor_cli(simulate, cli_path), timeout_s=timeout,
                                lock_path=default_lock_path(), lock_wait_s=timeout,
                                console=False)
    try:
        return collector.collect()
    finally:
        collector.close()
