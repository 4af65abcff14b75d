"""The guard: the daemon turns unprotected no-battery write cache off, only when told to."""

from __future__ import annotations

import json
from pathlib import Path

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.simulated import SimulatedCli
from smartarray_agent.simulator import resolve_scenario
from smartarray_agent.write.guard import FIRST_BACKOFF_S, Guard

from .agent_process import AgentInProcess, value
from .invocations import read_invocations


def config(tmp_path, guard: bool) -> str:
    return (
        '[ssacli]\nsimulate = "unsafe-nbwc"\n'
        f'lock_file = "{tmp_path / "cli.lock"}"\n'
        "[collect]\ninterval_s = 3600\n[sysfs]\nenabled = false\nudev_debounce_s = 0\n"
        f"[policy]\ndisable_unprotected_write_cache = {str(guard).lower()}\n"
        f'[audit]\nfile = "{tmp_path / "audit.jsonl"}"\n'
    )


def test_the_guard_turns_no_battery_write_cache_off_and_audits_it(tmp_path):
    agent = AgentInProcess(tmp_path, config(tmp_path, guard=True)).start()
    try:
        samples = agent.wait_for(lambda s: value(
            s, "smartarray_no_battery_write_cache_enabled", controller="0") == 0)
    finally:
        agent.stop()
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 0
    intent, entry = [json.loads(line)
                     for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert (intent["event"], intent["id"]) == ("intent", entry["id"])
    assert intent["command"] == ["ctrl", "slot=0", "modify", "nobatterywritecache=disable"]
    assert entry["user"] == "smartarray-agent (guard)"
    assert entry["outcome"] == "changed"
    assert entry["before"]["no_battery_write_cache"] is True
    assert entry["after"]["no_battery_write_cache"] is False
    assert "guard: " in agent.logs


def test_without_the_setting_the_daemon_only_reports(tmp_path):
    agent = AgentInProcess(tmp_path, config(tmp_path, guard=False)).start()
    try:
        agent.wait_for(lambda s: value(s, "smartarray_collector_success", collector="ssacli"))
        agent.collect()  # a second round: the guard would have acted after the first
        samples = agent.samples()
    finally:
        agent.stop()
    assert value(samples, "smartarray_no_battery_write_cache_enabled", controller="0") == 1
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert not (tmp_path / "audit.jsonl").exists()


def test_a_guard_that_cannot_act_backs_off_and_logs_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "sim"))
    caplog.set_level("DEBUG", logger="smartarray_agent.write.guard")
    runner = VendorRunner(SimulatedCli(resolve_scenario("unsafe-nbwc")),  # in this process
                          HostLock(tmp_path / "cli.lock", 10), timeout_s=30)
    clock = [1000.0]
    guard = Guard(Path("/dev/full"), 80.0, Charge(None),
                  monotonic=lambda: clock[0])
    snapshot = read_snapshot(runner)
    for _ in range(3):  # three rounds within the first back-off: one attempt
        assert guard.enforce(snapshot, runner) is False
    clock[0] += FIRST_BACKOFF_S
    guard.enforce(snapshot, runner)  # the second attempt, after the back-off
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "/dev/full" in errors[0].getMessage()
    assert "next try in 60 s" in errors[0].getMessage()
    assert "next try in 120 s" in caplog.text  # doubled, at debug level
    invocations = read_invocations(tmp_path / "sim")
    assert invocations  # the simulator ran: the reads are recorded...
    assert [c for i in invocations for c in i.commands if "modify" in c] == []  # ...no write
