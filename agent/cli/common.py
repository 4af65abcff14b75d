"""What the ``smartarray-agent`` commands share: options, the exit path, the configuration
and the vendor CLI it names."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.charge import Charge
from smartarray_agent.cli import exitcodes
from smartarray_agent.collectors.ssacli.collector import SsacliCollector
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli
from smartarray_agent.config import DEFAULT_PATH, Config, Overrides, SsacliConfig, load_or_default
from smartarray_agent.configfile import ConfigError
from smartarray_agent.model import Snapshot
from smartarray_agent.sources import vendor_cli as configured_vendor_cli

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", metavar="FILE",
        help=f"Configuration file (default: {DEFAULT_PATH}, when it exists).",
    ),
]
SimulateOption = Annotated[
    str | None,
    typer.Option(
        "--simulate", metavar="SCENARIO",
        help="Run the bundled simulator (a scenario name or file) instead of the vendor CLI.",
    ),
]
CliPathOption = Annotated[
    str | None,
    typer.Option("--cli", metavar="PATH", help="The vendor CLI to run (default: discovered)."),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("--timeout", min=1.0,
                 help="Seconds before the vendor CLI is killed (default: [ssacli] timeout_s, "
                      "120)."),
]


def warn(message: str) -> None:
    """One warning line on standard error; the command goes on."""
    typer.echo(f"smartarray-agent: warning: {message}", err=True)


def read_charge(settings: Config) -> Charge:
    """The iLO's battery charge for a one-off command, read now, before the CLI lock is
    taken (the iLO is slow); a failure is a warning and the command goes on without it."""
    charge = Charge(settings.redfish)
    if charge.configured and charge.read() is None:
        warn(f"no battery charge from the iLO: {charge.error}")
    return charge


def fail(message: str, code: int) -> typer.Exit:
    """Print ``message`` as one error line and return the Exit to raise."""
    typer.echo(f"smartarray-agent: {message}", err=True)
    return typer.Exit(code)


def command_config(config_path: Path | None, simulate: str | None, cli_path: str | None,
                   timeout: float | None = None) -> Config:
    """The configuration file (or the defaults) with the command's options laid over it;
    exits 2 listing the problems of an invalid file."""
    try:
        config = Overrides(simulate, Path(cli_path) if cli_path else None).apply(
            load_or_default(config_path))
    except ConfigError as error:
        raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
    if timeout is not None:
        ssacli = config.ssacli.model_copy(update={"timeout_s": timeout})
        config = config.model_copy(update={"ssacli": ssacli})
    return config


class CliUnavailable(RuntimeError):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def resolve_vendor_cli(ssacli: SsacliConfig) -> VendorCli:
    """The simulator or vendor CLI the configuration names; CliUnavailable says why not."""
    from smartarray_agent.collectors.simulator import ScenarioError

    try:
        return configured_vendor_cli(ssacli)
    except ScenarioError as error:
        raise CliUnavailable(str(error), exitcodes.BAD_INPUT) from None
    except CliNotFound as error:
        raise CliUnavailable(str(error), exitcodes.CLI_NOT_FOUND) from None


def vendor_cli(ssacli: SsacliConfig) -> VendorCli:
    """:func:`resolve_vendor_cli`, or exit with its message."""
    try:
        return resolve_vendor_cli(ssacli)
    except CliUnavailable as error:
        raise fail(str(error), error.code) from None


def read_controllers(ssacli: SsacliConfig) -> Snapshot:
    """One one-shot ``ctrl all show config detail`` under the host lock, for the commands
    that read once (status, check). Raises CliUnavailable or CollectionError."""
    collector = SsacliCollector(
        resolve_vendor_cli(ssacli), timeout_s=ssacli.timeout_s, lock_path=ssacli.lock_path,
        lock_wait_s=ssacli.lock_wait_s, console=False,
    )
    try:
        return collector.collect()
    finally:
        collector.close()
