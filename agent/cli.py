"""The ``smartarray-agent`` command line."""

from __future__ import annotations

import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from smartarray_agent import cli_change, cli_check, cli_simulate, exitcodes, status_view
from smartarray_agent.cli_common import (
    CliPathOption,
    SimulateOption,
    TimeoutOption,
    fail,
    vendor_cli,
)
from smartarray_agent.collectors.ssacli.collector import CollectionError, SsacliCollector
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import NO_CONTROLLERS_HINT, ParseError
from smartarray_agent.collectors.ssacli.lock import default_lock_path
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.inputs import InputError, read_capture
from smartarray_agent.model import Snapshot

if TYPE_CHECKING:
    from smartarray_agent.collectors.redfish.settings import RedfishSettings

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Smart Array write cache and backup power: status, metrics and safe changes.",
)


JsonOption = Annotated[bool, typer.Option("--json", help="Print the status JSON contract.")]
InputOption = Annotated[
    str | None,
    typer.Option(
        "--input", "-i", metavar="FILE",
        help="Parse saved CLI output ('-' for standard input) instead of running the CLI.",
    ),
]
RedfishConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--redfish-config", metavar="FILE",
        help="Add the battery charge from the iLO (Redfish): a TOML file with a [redfish] table.",
    ),
]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"smartarray-agent {version('smartarray-agent')}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Smart Array write cache and backup power: status, metrics and safe changes."""


@app.command()
def status(
    as_json: JsonOption = False,
    input_file: InputOption = None,
    simulate: SimulateOption = None,
    cli_path: CliPathOption = None,
    timeout: TimeoutOption = 120.0,
    redfish_config: RedfishConfigOption = None,
) -> None:
    """Show each controller's cache, write-cache switches and backup power."""
    if input_file is not None and simulate is not None:
        raise fail("--input and --simulate exclude each other", exitcodes.BAD_INPUT)
    redfish = _redfish_settings(redfish_config) if redfish_config is not None else None
    if input_file is not None:
        snapshot = _snapshot_from_file(input_file)
    else:
        snapshot = _snapshot_from_cli(vendor_cli(simulate, cli_path), timeout)
    if redfish is not None and snapshot.controllers:
        snapshot = _with_redfish_charge(snapshot, redfish)
    if as_json:
        typer.echo(snapshot.model_dump_json(indent=2))
    else:
        typer.echo(status_view.render(snapshot), nl=False)
    if snapshot.error is not None:
        raise _vendor_error(snapshot)


def _snapshot_from_file(path: str) -> Snapshot:
    try:
        return parse(read_capture(path))
    except (InputError, ParseError) as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None


def _snapshot_from_cli(cli: VendorCli, timeout: float) -> Snapshot:
    collector = SsacliCollector(
        cli, timeout_s=timeout, lock_path=default_lock_path(), lock_wait_s=timeout,
        console=False,
    )
    try:
        return collector.collect()
    except CollectionError as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    finally:
        collector.close()


def _redfish_settings(path: Path) -> RedfishSettings:
    from smartarray_agent.collectors.redfish.settings import SettingsError, load_settings

    try:
        return load_settings(path)
    except SettingsError as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None


def _with_redfish_charge(snapshot: Snapshot, settings: RedfishSettings) -> Snapshot:
    """The snapshot with the iLO's battery charge; a Redfish failure is only a warning."""
    from smartarray_agent.collectors.redfish.collector import RedfishCollector
    from smartarray_agent.collectors.redfish.errors import RedfishError
    from smartarray_agent.collectors.redfish.merge import merge_charge

    try:
        reading = RedfishCollector(settings).collect()
    except RedfishError as error:
        typer.echo(f"smartarray-agent: warning: no battery charge from the iLO: {error}",
                   err=True)
        return snapshot
    return merge_charge(snapshot, reading, time.time(), settings.max_age_s)


def _vendor_error(snapshot: Snapshot) -> typer.Exit:
    error = snapshot.error
    assert error is not None
    message = f"the saved output is a vendor error: Error: {error.message}"
    if error.kind == "no_controllers":
        message += f"\nhint: {NO_CONTROLLERS_HINT}"
    return fail(message, exitcodes.VENDOR_ERROR)


app.command("set-cache-ratio")(cli_change.set_cache_ratio)
app.command("write-cache")(cli_change.write_cache)
app.command("check")(cli_check.check_command)
app.add_typer(cli_simulate.app, name="simulate")

from smartarray_agent import cli_agent  # noqa: E402 (the agent's commands: run, config, metrics)

cli_agent.register(app)


def main() -> None:
    app(prog_name="smartarray-agent")


if __name__ == "__main__":
    sys.exit(main())
