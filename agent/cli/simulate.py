"""``smartarray-agent simulate list|run``: the bundled simulator from the agent's command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.collectors import simulator
from smartarray_agent.collectors.simulator import cli as simulator_cli


def list_scenarios() -> None:
    """One bundled scenario per line: name, a tab, its description."""
    for name, description in simulator.list_scenarios():
        print(f"{name}\t{description}")


def run(
    scenario: Annotated[str, typer.Argument(
        metavar="SCENARIO", help="A bundled scenario name or a scenario file.")],
    words: Annotated[list[str] | None, typer.Argument(
        metavar="WORDS", help="One vendor CLI command, after --.")] = None,
    state_dir: Annotated[Path | None, typer.Option(
        "--state-dir", metavar="DIR", help="State directory of the simulated host.")] = None,
) -> None:
    """Answer like ssacli for SCENARIO (a bundled scenario name or a file).

    With WORDS, after --, that one command: `simulate run gen9-battery -- ctrl all show
    status`; with none, the interactive console."""
    argv = ["--scenario", scenario]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    raise SystemExit(simulator_cli.main([*argv, *(words or [])]))
