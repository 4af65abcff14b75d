"""Unfinished changes (issue #28, finding 1): a real write command killed with SIGKILL between
its intent and its send, and between its send and its outcome; an outcome line cut by a power
loss; a controller that cannot be read; and the daemon, which reconciles at every round. The
simulator stands in for the vendor CLI, with its own single-instance lock and state."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .agent_cli import Ran, agent
from .agent_process import (
    AgentInProcess,
    parse_samples,
    processes_running,
    scenario_file,
    simulated,
    value,
)
from .invocations import read_invocations
from .test_change import read_audit

AGENT = [sys.executable, "-m", "smartarray_agent"]


class Host:
    """A simulated host (its own copy of a scenario, so its CLI processes can be found), its
    lock and audit file, and the agent's commands on it."""

    def __init__(self, tmp_path: Path, scenario: str) -> None:
        self.scenario = scenario_file(tmp_path, scenario)
        self.state = tmp_path / "sim"
        self.audit = tmp_path / "audit.jsonl"
        self.common = ["--simulate", str(self.scenario), "--audit-file", str(self.audit),
                       "--lock-file", str(tmp_path / "cli.lock")]
        self.config = tmp_path / "agent.toml"  # status and metrics find the audit file here
        self.config.write_text(f'[audit]\nfile = "{self.audit}"\n[sysfs]\nenabled = false\n')

    def env(self, faults: dict | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
        env["SMARTARRAY_SIM_STATE_DIR"] = str(self.state)
        if faults:
            env["SMARTARRAY_SIM_FAULTS"] = json.dumps(faults)
        return env

    def start(self, *args: str, faults: dict | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen([*AGENT, *args, *self.common], env=self.env(faults),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run(self, *args: str) -> Ran:
        """A change, with this host's options, in this process (tests/agent_cli.py); one
        that is killed or signalled is a process (:meth:`start`)."""
        return agent(*args, *self.common, env=self.env())

    def read(self, *args: str) -> Ran:
        """``status`` or ``metrics``, which take the audit file from the configuration."""
        return agent(*args, "--config", str(self.config), *self.common[:2], *self.common[4:],
                     env=self.env())

    def records(self) -> list[dict]:
        return read_audit(self.audit)[0] if self.audit.exists() else []

    def wait_for_command(self, words: str, timeout_s: float = 60.0) -> None:
        """Until the simulator has logged ``words`` (it logs a command before answering)."""
        deadline = time.monotonic() + timeout_s
        while not self._got(words):
            assert time.monotonic() < deadline, f"the simulator never got {words!r}"
            time.sleep(0.05)

    def _got(self, words: str) -> bool:
        try:
            return any(words in i.commands for i in read_invocations(self.state))
        except ValueError:  # a line the simulator is writing
            return False

    def end_cli(self) -> None:
        """End the vendor CLI the killed command left running (its own session: SIGKILL of
        the command does not reach it), as an operator would."""
        for pid, _ in processes_running(str(self.scenario)):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while processes_running(str(self.scenario)):
            assert time.monotonic() < deadline, "the simulator did not end"
            time.sleep(0.05)


def _kill_mid_change(host: Host, hang: str, sent_when: str) -> dict:
    """Start a change that turns no-battery write cache off, SIGKILL it once the simulator
    got ``sent_when``, and return its intent record."""
    change = host.start("write-cache", "disable", "--what", "no-battery", "--slot", "0",
                        faults={"hang": [hang]})
    try:
        host.wait_for_command(sent_when)
        change.send_signal(signal.SIGKILL)
        change.wait(timeout=30)
    finally:
        change.kill()
        change.communicate()
    host.end_cli()
    intents = [r for r in host.records() if r["event"] == "intent"]
    assert len(intents) == 1 and not [r for r in host.records() if r["event"] == "outcome"]
    return intents[0]


def _reconciled(host: Host, intent: dict) -> dict:
    outcomes = [r for r in host.records() if r["event"] == "outcome" and r["id"] == intent["id"]]
    assert len(outcomes) == 1, outcomes
    outcome = outcomes[0]
    assert outcome["outcome"] == "reconciled"
    assert outcome["asked_by"] == intent["user"] and outcome["asked_at"] == intent["time"]
    assert outcome["requested"] == intent["requested"]
    return outcome


def test_killed_between_intent_and_send_status_reconciles_it_as_not_in_effect(tmp_path):
    host = Host(tmp_path, "unsafe-nbwc")
    intent = _kill_mid_change(host, "modify", "ctrl slot=0 modify nobatterywritecache=disable")
    status = host.read("status")
    assert status.returncode == 0, status.stderr
    assert "unfinished change reconciled: no-battery write cache off on slot 0" in status.stderr
    assert status.stderr.count("unfinished change reconciled") == 1  # said once, not twice
    assert "now shows cache_ratio=10/90 no_battery_write_cache=on" in status.stderr
    assert f"(record {intent['id']})" in status.stderr
    assert "the change is not in effect" in status.stderr
    outcome = _reconciled(host, intent)
    assert outcome["in_effect"] is False
    assert outcome["after"]["no_battery_write_cache"] is True
    again = host.read("status")
    assert "unfinished" not in again.stderr  # reconciled once


def test_killed_between_send_and_outcome_the_next_change_reconciles_it_as_in_effect(tmp_path):
    host = Host(tmp_path, "unsafe-nbwc")
    intent = _kill_mid_change(host, "ctrl slot=0 show config detail",
                              "ctrl slot=0 show config detail")
    change = host.run("set-cache-ratio", "50/50", "--slot", "0")
    assert change.returncode == 0, change.stderr
    assert "the change is in effect" in change.stderr
    assert change.stderr.count("unfinished change reconciled") == 1
    outcome = _reconciled(host, intent)
    assert outcome["in_effect"] is True and outcome["after"]["no_battery_write_cache"] is False
    last = host.records()[-1]
    assert last["requested"]["kind"] == "cache-ratio" and last["outcome"] == "changed"


def _open_intent(host: Host, slot: str = "0") -> dict:
    return {"time": "2026-11-24T03:00:00.000+00:00", "user": "alice (via sudo as root)",
            "host": "db1", "id": "5e1f0c2a9b3d4e6f8a7b6c5d4e3f2a10", "event": "intent",
            "outcome": None, "verdict": "allowed",
            "controller": {"slot": slot, "model": "Smart Array P440ar", "serial": None},
            "requested": {"kind": "cache-ratio", "read_percent": 25, "write_percent": 75},
            "before": {"cache_ratio": "10/90"}, "after": None,
            "command": ["ctrl", f"slot={slot}", "modify", "cacheratio=25/75"],
            "message": "allowed"}


def test_an_outcome_cut_by_a_power_loss_leaves_the_intent_to_reconcile(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    intent = _open_intent(host)
    torn = json.dumps({**intent, "event": "outcome", "outcome": "changed"})[:57]
    host.audit.write_text(json.dumps(intent) + "\n" + torn)
    status = host.read("status")
    assert status.returncode == 0, status.stderr
    assert "cache ratio 25/75 on slot 0, asked at 2026-11-24T03:00:00.000+00:00 by alice" \
        in status.stderr
    assert "the change is not in effect" in status.stderr
    # the torn line stays; the record starts a line of its own
    assert read_audit(host.audit)[1] == [2]
    assert _reconciled(host, intent)["in_effect"] is False


def test_a_controller_that_cannot_be_read_keeps_it_open_refuses_changes_and_counts(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    intent = _open_intent(host)
    host.audit.write_text(json.dumps(intent) + "\n")
    samples = parse_samples(host.read("metrics", "--once").stdout)
    assert value(samples, "smartarray_unfinished_changes") == 1
    assert value(samples, "smartarray_unfinished_change_info", controller="0",
                 id=intent["id"], kind="cache-ratio") == 1
    broken = host.start("set-cache-ratio", "0/100", "--slot", "0",
                        faults={"crash": ["ctrl slot=0 show config detail"]})
    _, err = broken.communicate(timeout=120)
    assert broken.returncode == 4, err
    assert f"record {intent['id']}" in err and "nothing sent" in err
    assert not any(r.get("requested", {}).get("read_percent") == 0 for r in host.records()
                   if r["event"] == "intent")
    fixed = host.run("set-cache-ratio", "0/100", "--slot", "0")  # the CLI answers again
    assert fixed.returncode == 0, fixed.stderr
    assert _reconciled(host, intent)["in_effect"] is False


def test_the_daemon_reconciles_at_its_round_and_the_metric_drops(tmp_path):
    audit = tmp_path / "audit.jsonl"
    intent = _open_intent(Host(tmp_path, "gen9-battery"))
    audit.write_text(json.dumps(intent) + "\n")
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "gen9-battery",
                                               f'[audit]\nfile = "{audit}"\n')).start()
    try:
        samples = agent.wait_for(lambda s: value(s, "smartarray_unfinished_changes") == 0)
        assert value(samples, "smartarray_collector_success", collector="audit") == 1
    finally:
        agent.stop()
    outcome = [r for r in read_audit(audit)[0] if r["event"] == "outcome"]
    assert len(outcome) == 1 and outcome[0]["outcome"] == "reconciled"
    assert outcome[0]["user"] == "smartarray-agent (daemon)"
    assert "unfinished change reconciled" in agent.logs
