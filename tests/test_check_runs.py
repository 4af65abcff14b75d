"""A check runs the vendor CLI once (issue #29, finding 6): its version, which ``ctrl all show
config detail`` does not print, was asked of a second run (``version``) by every command. The
console the read runs in tells it in its banner; a CLI without a console is asked once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.simulated import SimulatedCli
from smartarray_agent.simulator import BUNDLED

from .agent_cli import Ran
from .agent_cli import agent as run_agent
from .invocations import read_invocations

CONFIG_DETAIL = "ctrl all show config detail"


def agent(state: Path, *args: str, faults: dict | None = None) -> Ran:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env["SMARTARRAY_SIM_STATE_DIR"] = str(state)
    if faults:
        env["SMARTARRAY_SIM_FAULTS"] = json.dumps(faults)
    return run_agent(*args, env=env)


def runs(state: Path) -> list[list[str]]:
    """The commands of each vendor CLI process started so far, in order."""
    return [invocation.commands for invocation in read_invocations(state)]


def test_repeated_checks_run_the_vendor_cli_once_each(tmp_path):
    state = tmp_path / "sim"
    for _ in range(3):
        again = agent(state, "check", "--simulate", "gen9-battery")
        assert again.returncode == 0, again.stdout + again.stderr
    assert runs(state) == [[CONFIG_DETAIL]] * 3


def test_a_cli_without_a_console_is_asked_its_version_once(tmp_path):
    state = tmp_path / "sim"
    scenario = tmp_path / "box.toml"
    scenario.write_text(f'cli_version = "6.10-2.0"\n{(BUNDLED / "gen9-battery.toml").read_text()}')
    result = agent(state, "status", "--json", "--simulate", str(scenario),
                   faults={"console_refused": True})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cli_version"] == "6.10-2.0"
    assert [i.commands for i in read_invocations(state) if i.mode == "argv"] == [
        [CONFIG_DETAIL], ["version"]]


def test_status_reads_the_version_from_the_console_it_reads_in(tmp_path):
    state = tmp_path / "sim"
    scenario = tmp_path / "box.toml"
    scenario.write_text(f'cli_version = "6.10-2.0"\n{(BUNDLED / "gen9-battery.toml").read_text()}')
    result = agent(state, "status", "--json", "--simulate", str(scenario))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cli_version"] == "6.10-2.0"
    assert runs(state) == [[CONFIG_DETAIL]]  # one start (issue #40)


def test_only_a_lasting_answer_is_kept(tmp_path, monkeypatch):
    """An ``Error:`` (here the vendor's lock conflict) may not recur: asked again next time."""
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps({"lock_conflict": True}))
    cli = SimulatedCli(BUNDLED / "gen9-battery.toml")  # in this process
    runner = VendorRunner(cli, HostLock(tmp_path / "cli.lock", 5), timeout_s=30)
    assert runner.version() is None
    monkeypatch.delenv("SMARTARRAY_SIM_FAULTS")
    assert runner.version() == "3.10.3.0"
