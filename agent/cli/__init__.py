"""The ``smartarray-agent`` command line."""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Annotated

import typer

from smartarray_agent.charge import ChargeSource
from smartarray_agent.cli import change as cli_change
from smartarray_agent.cli import check as cli_check
from smartarray_agent.cli import exitcodes
from smartarray_agent.cli import simulate as cli_simulate
from smartarray_agent.cli import table as status_view
from smartarray_agent.cli.common import (
    CliPathOption,
    CliUnavailable,
    ConfigOption,
    SimulateOption,
    TimeoutOption,
    command_config,
    fail,
    read_controllers,
    warn,
)
from smartarray_agent.cli.inputs import InputError, read_capture
from smartarray_agent.collectors.ssacli.collector import CollectionError
from smartarray_agent.collectors.ssacli.errors import NO_CONTROLLERS_HINT, ParseError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.config import SsacliConfig
from smartarray_agent.model import Snapshot

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "[redfish]" is a config table, not markup
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
    config: ConfigOption = None,
    simulate: SimulateOption = None,
    cli_path: CliPathOption = None,
    timeout: TimeoutOption = None,
) -> None:
    """Show each controller's cache, write-cache switches and backup power (with the iLO's
    battery charge when [redfish] is configured)."""
    if input_file is not None and simulate is not None:
        raise fail("--input and --simulate exclude each other", exitcodes.BAD_INPUT)
    settings = command_config(config, simulate, cli_path, timeout)
    if input_file is not None:
        snapshot = _snapshot_from_file(input_file)
    else:
        snapshot = _snapshot_from_cli(settings.ssacli)
    snapshot = ChargeSource(settings.redfish, warn).apply(snapshot)
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


def _snapshot_from_cli(ssacli: SsacliConfig) -> Snapshot:
    try:
        return read_controllers(ssacli)
    except CliUnavailable as error:
        raise fail(str(error), error.code) from None
    except CollectionError as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None


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

from smartarray_agent.cli import agent as cli_agent  # noqa: E402 (the agent's commands: run, config, metrics)
from smartarray_agent.cli import serve as cli_serve  # noqa: E402

cli_agent.register(app)
app.command("serve")(cli_serve.serve)


def main() -> None:
    app(prog_name="smartarray-agent")


if __name__ == "__main__":
    sys.exit(main())
