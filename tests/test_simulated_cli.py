"""``--simulate`` answers in this process (agent/simulated.py over simulator/inprocess.py),
with the bytes the simulator program prints, one-shot and in its console; a scenario whose
faults only a process shows runs the program (issue #49's in-process simulator)."""

from __future__ import annotations

import json
import os

import pytest

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.simulated import SimulatedCli
from smartarray_agent.simulator import resolve_scenario, vendor_argv

from . import matrix
from .agent_cli import agent
from .invocations import read_invocations

SCENARIOS = ["hpacucli-legacy", "recharging", "two-controllers", "gen10"]  # each generation
COMMANDS = [["ctrl", "all", "show", "config", "detail"], ["version"], ["help"],
            ["ctrl", "slot=9", "show"], ["ctrl", "slot=0", "modify", "cacheratio=?"],
            ["ctrl", "slot=0", "modify", "nobatterywritecache=enable"],
            ["ctrl", "slot=0", "modify", "drivewritecache=enable"],
            ["ctrl", "slot=0", "show", "config", "detail"], ["ctrl", "all", "bogus"]]


def both(tmp_path, monkeypatch, scenario: str) -> tuple[SimulatedCli, VendorCli]:
    """The simulator in this process and as a program, each on a host of its own."""
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "in-process"))
    program = VendorCli(tuple(vendor_argv(scenario, tmp_path / "program")), "simulator")
    return SimulatedCli(resolve_scenario(scenario)), program


# Each one-shot command starts the program: by default on one generation (the consoles below
# compare every generation's, one program each), on every one with --full-matrix.
@pytest.mark.parametrize("scenario", matrix.chosen(SCENARIOS, lambda name: name == "gen10"))
def test_one_shot_answers_are_the_programs_to_the_byte(tmp_path, monkeypatch, scenario):
    inside, program = both(tmp_path, monkeypatch, scenario)
    for command in COMMANDS:
        mine, its = (cli.run(command, timeout_s=30) for cli in (inside, program))
        assert (mine.returncode, mine.output) == (its.returncode, its.output), command
    assert {inv.pid for inv in read_invocations(tmp_path / "in-process")} == {os.getpid()}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_console_answers_are_the_programs_to_the_byte(tmp_path, monkeypatch, scenario):
    inside, program = both(tmp_path, monkeypatch, scenario)
    consoles = [cli.console(timeout_s=30) for cli in (inside, program)]
    try:
        assert consoles[0].banner == consoles[1].banner
        for command in [*COMMANDS, ["set", "target", "ctrl", "slot=0"], ["show"]]:
            mine, its = (c.run(" ".join(command), confirm=True) for c in consoles)
            assert mine == its, command
    finally:
        for console in consoles:
            console.close()
    modes = [inv.mode for inv in read_invocations(tmp_path / "in-process")]
    assert modes == ["console"]


def test_a_crash_and_a_refused_console_are_the_programs(tmp_path, monkeypatch):
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps({"crash": ["ctrl all show"]}))
    inside, program = both(tmp_path, monkeypatch, "gen9-battery")
    mine, its = (cli.run(["ctrl", "all", "show"], timeout_s=30) for cli in (inside, program))
    assert (mine.returncode, mine.output) == (its.returncode, its.output) == (134, its.output)


def test_faults_only_a_process_shows_run_the_program(tmp_path, monkeypatch):
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps({"command_delay_s": 0.01}))
    inside, _ = both(tmp_path, monkeypatch, "gen9-battery")
    assert inside.run(["ctrl", "all", "show"], timeout_s=30).returncode == 0
    invocation, = read_invocations(tmp_path / "in-process")
    assert invocation.pid != os.getpid()


def test_status_on_the_simulator_runs_no_process(tmp_path):
    state = tmp_path / "sim"
    result = agent("status", "--json", "--simulate", "two-controllers",
                   env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(state)})
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["controllers"]) == 2
    assert [(inv.pid, inv.mode) for inv in read_invocations(state)] == [(os.getpid(), "console")]
