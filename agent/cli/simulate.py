"""``smartarray-agent simulate list|run``: the bundled simulator from the agent's command."""

from __future__ import annotations

from pathlib import Path

import click
from click.exceptions import Exit


@click.group("simulate", no_args_is_help=True, help="The bundled Smart Array CLI simulator.")
def simulate() -> None:
    pass


@simulate.command("list")
def list_command() -> None:
    """One bundled scenario per line: name, a tab, its description."""
    from smartarray_agent.collectors import simulator

    for name, description in simulator.list_scenarios():
        click.echo(f"{name}\t{description}")


@simulate.command(
    "run",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@click.argument("scenario")
@click.option("--state-dir", type=click.Path(path_type=Path), metavar="DIR",
              help="State directory of the simulated host.")
@click.pass_context
def run_command(context: click.Context, scenario: str, state_dir: Path | None) -> None:
    """Answer like ssacli for SCENARIO (a bundled scenario name or a file):
    `simulate run gen9-battery -- ctrl all show status`; with no command words, the
    interactive console."""
    from smartarray_agent.collectors.simulator import cli as simulator_cli

    argv = ["--scenario", scenario]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    raise Exit(simulator_cli.main([*argv, *context.args]))
