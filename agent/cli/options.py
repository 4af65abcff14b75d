"""The options several commands share, each declared once as an ``Annotated`` type."""

from __future__ import annotations

import math
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import typer

from smartarray_agent.locations import CONFIG_FILE

PROG = "smartarray-agent"


def float_range(minimum: float, maximum: float | None = None) -> Callable[[str], float]:
    """A parser of a finite number from ``minimum`` to ``maximum``; else a usage error."""
    bounds = f"x>={minimum:g}" if maximum is None else f"{minimum:g}<=x<={maximum:g}"

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise typer.BadParameter(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise typer.BadParameter(f"{text!r} is not a finite number")
        if value < minimum or (maximum is not None and value > maximum):
            raise typer.BadParameter(f"{value:g} is not in the range {bounds}")
        return value

    return number


def version_option(program: str, *names: str) -> Any:

    def show(value: bool) -> None:
        if value:
            print(f"{program} {version('smartarray-agent')}")
            raise typer.Exit()

    return typer.Option(*names, is_eager=True, expose_value=False, callback=show,
                        help="Print the version.")


ConfigFile = Annotated[Path | None, typer.Option(
    "--config", metavar="FILE",
    help=f"Configuration file (default: {CONFIG_FILE}, when it exists).")]
Simulate = Annotated[str | None, typer.Option(
    "--simulate", metavar="SCENARIO",
    help="Run the bundled simulator (a scenario name or file) instead of the vendor CLI.")]
CliPath = Annotated[Path | None, typer.Option(
    "--cli", metavar="PATH", help="The vendor CLI to run (default: discovered).")]
Timeout = Annotated[float | None, typer.Option(
    "-t", "--timeout", parser=float_range(1, 3600), metavar="SECONDS",  # [ssacli]'s bound
    help="Seconds before the vendor CLI is killed (default: [ssacli] timeout_s, 120).")]
LockFile = Annotated[Path | None, typer.Option(
    "--lock-file", metavar="FILE",
    help="The host-wide vendor CLI lock (default: [ssacli] lock_file).")]
Listen = Annotated[str | None, typer.Option(
    "--listen", "--web.listen-address", metavar="HOST:PORT",
    help="Listen address (overrides [web] listen_address; port 0: any).")]
WebConfigFile = Annotated[Path | None, typer.Option(
    "--web.config.file", metavar="FILE", dir_okay=False,
    help="Web config with TLS and basic auth (overrides [web] config_file).")]
TelemetryPath = Annotated[str | None, typer.Option(
    "--web.telemetry-path", metavar="PATH",
    help="Where the metrics are served (overrides [web] telemetry_path, /metrics).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]
InputFile = Annotated[str | None, typer.Option(
    "-i", "--input", metavar="FILE",
    help="Read saved CLI output ('-' for standard input) instead of running the CLI.")]
Ilo = Annotated[str | None, typer.Option(
    "--ilo", metavar="HOST[:PORT]",
    help="Read the controllers from this iLO's Redfish service alone, without the vendor CLI "
         "([redfish] gives the login and TLS settings; read-only).")]
