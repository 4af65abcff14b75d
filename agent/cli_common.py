"""What the ``smartarray-agent`` commands share: options, the exit path, the vendor CLI."""

from __future__ import annotations

from typing import Annotated

import typer

from smartarray_agent import exitcodes
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli, find_cli

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


def fail(message: str, code: int) -> typer.Exit:
    """Print ``message`` as one error line and return the Exit to raise."""
    typer.echo(f"smartarray-agent: {message}", err=True)
    return typer.Exit(code)


class CliUnavailable(RuntimeError):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def resolve_vendor_cli(simulate: str | None, cli_path: str | None) -> VendorCli:
    """The simulator for ``--simulate``, else the given or discovered vendor CLI."""
    if simulate is not None:
        from smartarray_agent.collectors import simulator

        try:
            return VendorCli(tuple(simulator.vendor_argv(simulate)), "simulator")
        except simulator.ScenarioError as error:
            raise CliUnavailable(str(error), exitcodes.BAD_INPUT) from None
    try:
        return find_cli(cli_path)
    except CliNotFound as error:
        raise CliUnavailable(str(error), exitcodes.CLI_NOT_FOUND) from None


def vendor_cli(simulate: str | None, cli_path: str | None) -> VendorCli:
    """:func:`resolve_vendor_cli`, or exit with its message."""
    try:
        return resolve_vendor_cli(simulate, cli_path)
    except CliUnavailable as error:
        raise fail(str(error), error.code) from None
