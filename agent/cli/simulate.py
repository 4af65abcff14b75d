"""``smartarray-agent simulate list|run|reset``: the bundled simulator from the agent's
command."""

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import fail


def list_scenarios() -> None:
    """One bundled scenario per line: name, a tab, its description."""
    from smartarray_agent import simulator

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
    from smartarray_agent.simulator import cli as simulator_cli

    argv = ["--scenario", scenario]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    raise SystemExit(simulator_cli.main([*argv, *(words or [])]))


def reset(scenario: Annotated[str | None, typer.Argument(
        metavar="SCENARIO", help="A bundled scenario name or a scenario file (default: "
                                 "every simulated host of yours).")] = None) -> None:
    """Forget what changes did to a simulated host: its next command starts again from
    the scenario file. A simulated host keeps its state between commands in
    $SMARTARRAY_SIM_STATE_DIR, else $XDG_RUNTIME_DIR/smartarray-sim/SCENARIO, else
    /tmp/smartarray-sim-UID/SCENARIO."""
    from smartarray_agent import simulator
    from smartarray_agent.simulator import state

    if scenario is None:
        directories = state.state_dirs()
    else:
        try:
            directories = [state.default_state_dir(simulator.resolve_scenario(scenario).stem)]
        except simulator.ScenarioError as error:
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    done = False
    for directory in directories:
        try:
            if state.reset(directory):
                print(f"reset {directory}")
                done = True
        except state.SimulatorBusy as error:
            raise fail(str(error), exitcodes.VENDOR_ERROR) from None
        except simulator.ScenarioError as error:  # a directory someone else could change
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    if not done:
        print("nothing to reset")
