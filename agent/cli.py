"""The ``smartarray-agent`` command line."""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Annotated

import typer

from smartarray_agent import exitcodes, status_view
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli, find_cli
from smartarray_agent.collectors.ssacli.errors import ParseError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.run import CliTimeout, run_once
from smartarray_agent.inputs import InputError, read_capture
from smartarray_agent.model import Snapshot

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Smart Array write cache and backup power: status, metrics and safe changes.",
)

COLLECT_COMMAND = ["ctrl", "all", "show", "config", "detail"]
NO_CONTROLLER_HINT = (
    "hint: load the SCSI generic driver ('modprobe sg'); the CLI sees no controller without it"
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print the status JSON contract.")]
InputOption = Annotated[
    str | None,
    typer.Option(
        "--input", "-i", metavar="FILE",
        help="Parse saved CLI output ('-' for standard input) instead of running the CLI.",
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
    float, typer.Option("--timeout", min=1.0, help="Seconds before the vendor CLI is killed.")
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


def fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"smartarray-agent: {message}", err=True)
    return typer.Exit(code)


@app.command()
def status(
    as_json: JsonOption = False,
    input_file: InputOption = None,
    simulate: SimulateOption = None,
    cli_path: CliPathOption = None,
    timeout: TimeoutOption = 120.0,
) -> None:
    """Show each controller's cache, write-cache switches and backup power."""
    if input_file is not None and simulate is not None:
        raise fail("--input and --simulate exclude each other", exitcodes.BAD_INPUT)
    if input_file is not None:
        snapshot = _snapshot_from_file(input_file)
    else:
        snapshot = _snapshot_from_cli(_vendor_cli(simulate, cli_path), timeout)
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


def _vendor_cli(simulate: str | None, cli_path: str | None) -> VendorCli:
    if simulate is not None:
        from smartarray_agent.collectors import simulator

        try:
            return VendorCli(tuple(simulator.vendor_argv(simulate)), "simulator")
        except simulator.ScenarioError as error:
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    try:
        return find_cli(cli_path)
    except CliNotFound as error:
        raise fail(str(error), exitcodes.CLI_NOT_FOUND) from None


def _snapshot_from_cli(cli: VendorCli, timeout: float) -> Snapshot:
    try:
        result = run_once(cli, COLLECT_COMMAND, timeout_s=timeout)
    except CliTimeout as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    except OSError as error:
        raise fail(
            f"could not run {cli.argv[0]}: {error.strerror}", exitcodes.VENDOR_ERROR
        ) from None
    try:
        return parse(result.output)
    except ParseError as error:
        raise fail(
            f"{cli.name} exited {result.returncode} with output that is not CLI output: {error}",
            exitcodes.VENDOR_ERROR,
        ) from None


def _vendor_error(snapshot: Snapshot) -> typer.Exit:
    error = snapshot.error
    assert error is not None
    message = f"the vendor CLI says: Error: {error.message}"
    if error.kind == "no_controllers":
        message += f"\n{NO_CONTROLLER_HINT}"
    return fail(message, exitcodes.VENDOR_ERROR)


def main() -> None:
    app(prog_name="smartarray-agent")


if __name__ == "__main__":
    sys.exit(main())
