"""The agent shares the host: the vendor CLI (here the simulator, which keeps the vendor's
single-instance rule) is free for anyone else between collections, busy only during one. The
daemon runs in this process (tests/agent_process.py), the CLI's users as processes of their
own; a daemon killed with SIGKILL is a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from smartarray_agent.collectors.ssacli import collector as ssacli_collector
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock, LockError
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Snapshot
from smartarray_agent.config import CONSOLE_GONE
from smartarray_agent.simulator import vendor_argv

from .agent_process import (
    AgentInProcess,
    AgentProcess,
    processes_running,
    scenario_file,
    value,
)
from .invocations import read_invocations

CONFLICT = "Error: Another instance of ACU is already running"


def config(directory: Path, scenario: Path, *, interval_s: float, console: bool | None) -> str:
    console_line = "" if console is None else f"console = {str(console).lower()}"
    return f"""
[ssacli]
simulate = "{scenario}"
lock_file = "{directory}/cli.lock"
timeout_s = 60
{console_line}
[collect]
interval_s = {interval_s}
[sysfs]
enabled = false
"""


def direct_call(agent: AgentInProcess, scenario: Path) -> subprocess.CompletedProcess[str]:
    """An administrator's own CLI call, from another process, on the same simulated host."""
    return subprocess.run(
        [sys.executable, "-m", "smartarray_agent.simulator", "--scenario",
         str(scenario), "ctrl", "all", "show", "status"],
        capture_output=True, text=True, timeout=60,
        env={**agent.env, "SMARTARRAY_SIM_FAULTS": json.dumps({"command_delay_s": 0})},
    )


def start(tmp_path: Path, *, console: bool | None, faults: dict | None = None,
          ) -> tuple[AgentInProcess, Path]:
    """The daemon of ``smartarray-agent run`` on gen9-battery, with a long interval: after its
    first collection it is idle. Returns the agent and its scenario file."""
    scenario = scenario_file(tmp_path, "gen9-battery", faults)
    agent = AgentInProcess(tmp_path, config(tmp_path, scenario, interval_s=600,
                                            console=console))
    return agent.start(), scenario


def ssacli_ok(samples) -> bool:
    return value(samples, "smartarray_collector_success", collector="ssacli") == 1.0


def wait_for_log(state_dir: Path, predicate, timeout_s: float = 30.0) -> None:
    """Wait until the simulator's invocation log satisfies ``predicate`` (an event each
    simulator process writes as it starts, runs a command and ends)."""
    deadline = time.monotonic() + timeout_s
    while not predicate(read_invocations(state_dir)):
        if time.monotonic() > deadline:
            raise AssertionError(f"the simulator log never showed it in {timeout_s} s")
        time.sleep(0.05)


def test_between_collections_five_direct_cli_calls_in_a_row_run(tmp_path):
    agent, scenario = start(tmp_path, console=None)  # the default: no console key
    try:
        agent.wait_for(ssacli_ok)
        state = tmp_path / "sim-state"
        wait_for_log(state, lambda invs: invs and all(i.end_monotonic for i in invs))
        calls = [direct_call(agent, scenario) for _ in range(5)]
        assert [c.returncode for c in calls] == [0] * 5, [c.stdout for c in calls]
        assert all("Smart Array P440ar in Slot 0" in c.stdout for c in calls)
        assert not any(CONFLICT in c.stdout for c in calls)
    finally:
        agent.stop()


def test_a_config_that_asks_for_the_gone_console_runs_and_leaves_the_cli_free(tmp_path):
    """``[ssacli] console = true`` kept a console open between collections, refusing every
    other user of the CLI. An older file that sets it still starts the daemon, which says
    the key is ignored; between collections the CLI is free."""
    agent, scenario = start(tmp_path, console=True)
    try:
        agent.wait_for(ssacli_ok)
        wait_for_log(tmp_path / "sim-state",
                     lambda invs: invs and all(i.end_monotonic for i in invs))
        call = direct_call(agent, scenario)
        assert call.returncode == 0, call.stdout
        assert CONFLICT not in call.stdout
        assert CONSOLE_GONE in agent.logs
    finally:
        agent.stop()


def test_a_direct_call_is_refused_while_a_collection_runs(tmp_path):
    state = tmp_path / "sim-state"
    agent, scenario = start(tmp_path, console=None, faults={"command_delay_s": 30})
    try:
        # the collection's CLI process has started its command and sits in the delay
        wait_for_log(state, lambda invs: any(i.commands and i.end_monotonic is None
                                             and i.pid != os.getpid() for i in invs))
        refused = direct_call(agent, scenario)
        assert refused.returncode == 1
        assert CONFLICT in refused.stdout
    finally:
        agent.stop()


def test_the_host_lock_is_free_while_a_collection_parses_what_the_cli_printed(
        tmp_path, monkeypatch):
    """The lock covers each vendor command, not the parse after it (which may wait for
    scrapes: agent/turns.py): another CLI user gets in as soon as the command has ended."""
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "sim-state"))
    lock_path = tmp_path / "cli.lock"
    runner = VendorRunner(VendorCli(tuple(vendor_argv("large")), "simulator"),
                          HostLock(lock_path, 10), timeout_s=60)
    taken_while_parsing: list[bool] = []
    real_parse = ssacli_collector.parse

    def parse(text: str) -> Snapshot:
        other = HostLock(lock_path, 0.5, notice=lambda message: None)  # another CLI user
        try:
            other.acquire()
        except LockError:
            taken_while_parsing.append(False)
        else:
            taken_while_parsing.append(True)
            other.release()
        return real_parse(text)

    monkeypatch.setattr(ssacli_collector, "parse", parse)
    snapshot = read_snapshot(runner)
    assert len(snapshot.controllers) == 8
    assert taken_while_parsing == [True]


def killed_while_hung(tmp_path: Path, **faults: object) -> tuple[AgentProcess, Path]:
    """``run`` killed (SIGKILL) while its CLI hangs in ``ctrl all show config detail``."""
    scenario = scenario_file(tmp_path, "gen9-battery")
    agent = AgentProcess(tmp_path, config(tmp_path, scenario, interval_s=600, console=None),
                         env={"SMARTARRAY_SIM_FAULTS": json.dumps(
                             {"hang": ["ctrl all show config detail"], **faults})}).start()
    try:
        wait_for_log(tmp_path / "sim-state", lambda invs: any(
            "ctrl all show config detail" in i.commands for i in invs))
    finally:
        agent.kill()
    return agent, scenario


def status_after(agent: AgentProcess, scenario: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "status", "--simulate", str(scenario),
         "--lock-file", str(agent.directory / "cli.lock")],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in agent.env.items() if k != "SMARTARRAY_SIM_FAULTS"})


def test_a_cli_left_running_by_a_killed_daemon_is_ended_by_the_next_holder(tmp_path):
    """Outside systemd, SIGKILL of the daemon leaves a one-shot vendor CLI running (its own
    session, no terminal), holding the vendor's single-instance lock (issue #31, finding 4).
    The next holder of the host lock finds it by the pid and start time the daemon recorded,
    ends it and says so; the command then runs."""
    agent, scenario = killed_while_hung(tmp_path, console_refused=True)  # so, one-shot
    left = processes_running(str(scenario))
    assert left, "the hung CLI should outlive the killed daemon"
    status = status_after(agent, scenario)
    assert status.returncode == 0, status.stderr
    assert f"ending the vendor CLI (pid {left[0][0]})" in status.stderr
    assert "left running when it was killed" in status.stderr
    assert "P440ar" in status.stdout
    assert processes_running(str(scenario)) == []


def test_a_killed_daemons_console_ends_with_its_terminal(tmp_path):
    """The console's terminal is its controlling terminal: when the daemon is killed, the
    terminal hangs up and the console gets SIGHUP, as over ssh; nothing is left to end."""
    agent, scenario = killed_while_hung(tmp_path)
    deadline = time.monotonic() + 30
    while processes_running(str(scenario)):
        assert time.monotonic() < deadline, "the console outlived its terminal"
        time.sleep(0.05)
    status = status_after(agent, scenario)
    assert status.returncode == 0, status.stderr
    assert "ending the vendor CLI" not in status.stderr
