"""``smartarray-agent simulate list|run``: the bundled simulator from the agent's command."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from smartarray_agent.cli.command import Command, Group, Parser


def _list(args: Namespace) -> None:
    from smartarray_agent.collectors import simulator

    for name, description in simulator.list_scenarios():
        print(f"{name}\t{description}")


def _run_arguments(parser: Parser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO")
    parser.add_argument("words", metavar="WORDS", nargs="*", default=[],
                        help="One vendor CLI command, after --.")
    parser.add_argument("--state-dir", type=Path, metavar="DIR",
                        help="State directory of the simulated host.")


def _run(args: Namespace) -> None:
    from smartarray_agent.collectors.simulator import cli as simulator_cli

    argv = ["--scenario", args.scenario]
    if args.state_dir is not None:
        argv += ["--state-dir", str(args.state_dir)]
    raise SystemExit(simulator_cli.main([*argv, *args.words]))


simulate = Group.of("The bundled Smart Array CLI simulator.", {
    "list": Command("One bundled scenario per line: name, a tab, its description.",
                    _list),
    "run": Command(
        "Answer like ssacli for SCENARIO (a bundled scenario name or a file).\n\n"
        "With WORDS, after --, that one command: `simulate run gen9-battery -- ctrl all show "
        "status`; with none, the interactive console.",
        _run, _run_arguments),
})
