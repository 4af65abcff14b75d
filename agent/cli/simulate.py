"""``smartarray-agent simulate list|run``: the bundled simulator from the agent's command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="The bundled Smart Array CLI simulator.")


@app.command("list")
def list_command() -> None:
    """One bundled scenario per line: name, a tab, its description."""
    from smartarray_agent.collectors import simulator

    for name, description in simulator.list_scenarios():
        typer.echo(f"{name}\t{description}")


@app.command(
    "run",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def run_command(
    context: typer.Context,
    scenario: Annotated[str, typer.Argument(help="A bundled scenario name or a file.")],
    state_dir: Annotated[
        Path | None, typer.Option("--state-dir", help="State directory of the simulated host.")
    ] = None,
) -> None:
    """Answer like ssacli for SCENARIO: `simulate run gen9-battery -- ctrl all show status`;
    with no command words, the interactive console."""
    from smartarray_agent.collectors.simulator import cli as simulator_cli

    argv = ["--scenario", scenario]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    raise typer.Exit(simulator_cli.main([*argv, *context.args]))
