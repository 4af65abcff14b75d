"""The write path against the simulator, run as an operator runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from .agent_cli import Ran, agent
from .invocations import overlaps, read_invocations
from .terminal import Terminal

MODIFY = "modify"


def read_audit(path: Path) -> tuple[list[dict], list[int]]:
    """The records of an audit file and the (1-based) numbers of its torn lines."""
    records, torn = [], []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            records.append(json.loads(line))
        except ValueError:
            torn.append(number)
    return records, torn


class Host:
    """A simulated host: its state directory, lock and audit log, and the agent CLI."""

    def __init__(self, tmp_path: Path, scenario: str, faults: dict | None = None) -> None:
        self.scenario = scenario
        self.state_dir = tmp_path / "sim"
        self.audit = tmp_path / "audit.jsonl"
        self.env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(self.state_dir))
        self.env.pop("SMARTARRAY_SIM_FAULTS", None)
        if faults:
            self.env["SMARTARRAY_SIM_FAULTS"] = json.dumps(faults)
        self.common = ["--simulate", scenario, "--audit-file", str(self.audit),
                       "--lock-file", str(tmp_path / "cli.lock")]

    def agent(self, *args: str) -> Ran:
        return self.agent_with(self.common, *args)

    def agent_with(self, common: list[str], *args: str) -> Ran:
        """The command with ``common`` in place of this host's usual options, in this process
        (tests/agent_cli.py); at a terminal, the tests below run a real one (pexpect)."""
        return agent(*args, *common, env=self.env)

    def status(self) -> dict:
        result = agent("status", "--json", "--simulate", self.scenario, env=self.env)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["controllers"][0]

    def modifies(self) -> list[str]:
        return [c for inv in read_invocations(self.state_dir) for c in inv.commands
                if MODIFY in c and "=?" not in c]

    def audit_entries(self) -> list[dict]:
        return [json.loads(line) for line in self.audit.read_text().splitlines()]


def test_set_cache_ratio_changes_then_is_idempotent(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    first = host.agent("set-cache-ratio", "25/75", "--slot", "0", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["changed"] is True
    assert report["before"]["cache_ratio"] == "10/90"
    assert report["after"]["cache_ratio"] == "25/75"
    assert host.status()["cache"]["write_percent"] == 75
    second = host.agent("set-cache-ratio", "25/75", "--slot", "0", "--json")
    assert second.returncode == 0
    assert json.loads(second.stdout)["changed"] is False
    assert host.modifies() == ["ctrl slot=0 modify cacheratio=25/75"]  # one write in all
    intent, outcome, again = host.audit_entries()
    assert (intent["event"], intent["outcome"]) == ("intent", None)
    assert intent["command"] == ["ctrl", "slot=0", "modify", "cacheratio=25/75"]
    assert outcome["id"] == intent["id"]
    for key in ("time", "user", "host", "controller", "before", "requested", "after",
                "command", "outcome"):
        assert key in outcome
    assert (outcome["event"], outcome["outcome"]) == ("outcome", "changed")
    assert again["outcome"] == "unchanged"
    assert "Smart Array P440ar in slot 0" in again["message"]
    assert "cache ratio 25/75 is already set" in again["message"]


def test_dry_run_prints_the_command_and_verdict_and_sends_nothing(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    result = host.agent("set-cache-ratio", "50/50", "--serial", "PSIM9P440AR001", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "would run: ctrl slot=0 modify cacheratio=50/50" in result.stdout
    assert "backup power is at or above the threshold" in result.stdout
    assert host.modifies() == []


@pytest.mark.parametrize("ratio", ["30/60", "abc", "101/-1", "50"])
def test_a_ratio_that_is_not_read_write_summing_to_100_is_bad_input(tmp_path, ratio):
    result = Host(tmp_path, "gen9-battery").agent("set-cache-ratio", ratio, "--slot", "0")
    assert result.returncode == 2
    assert "sum to 100" in result.stderr


def test_a_ratio_the_controller_does_not_accept_lists_what_it_does(tmp_path):
    host = Host(tmp_path, "hpacucli-legacy")
    result = host.agent("set-cache-ratio", "30/70", "--slot", "0")
    assert result.returncode == 2
    assert "does not accept the cache ratio 30/70" in result.stderr
    assert "25/75" in result.stderr
    assert host.modifies() == []


def test_raising_the_write_share_with_unprotected_cache_is_refused_and_sends_nothing(tmp_path):
    host = Host(tmp_path, "unsafe-nbwc")
    before = host.status()
    result = host.agent("set-cache-ratio", "0/100", "--slot", "0")
    assert result.returncode == 4
    message = result.stderr
    assert "Smart Array P440ar in slot 0" in message
    assert "batteries failed" in message
    assert "80%" in message
    assert host.modifies() == []
    assert host.status() == before
    assert host.audit_entries()[-1]["outcome"] == "refused"


def test_forcing_no_battery_write_cache_on_a_failed_battery_is_refused(tmp_path):
    host = Host(tmp_path, "failed-battery")
    result = host.agent("write-cache", "enable", "--what", "no-battery", "--slot", "0", "--yes")
    assert result.returncode == 4
    assert host.modifies() == []
    assert host.status()["cache"]["no_battery_write_cache"] is False


def test_turning_unprotected_write_cache_off_is_always_allowed(tmp_path):
    host = Host(tmp_path, "unsafe-nbwc")
    result = host.agent("write-cache", "disable", "--what", "no-battery", "--slot", "0")
    assert result.returncode == 0, result.stderr
    assert host.status()["cache"]["no_battery_write_cache"] is False


def test_enabling_needs_confirmation_and_without_a_terminal_nothing_is_sent(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    result = host.agent("write-cache", "enable", "--what", "drive", "--slot", "0")
    assert result.returncode == 6
    assert "--yes" in result.stderr
    assert host.modifies() == []
    assert host.audit_entries()[-1]["outcome"] == "declined"


@pytest.mark.parametrize(("answer", "code", "enabled"), [("y", 0, True), ("n", 6, False)])
def test_the_confirmation_prompt_answered_yes_and_no(tmp_path, answer, code, enabled):
    host = Host(tmp_path, "gen9-battery")
    child = Terminal([sys.executable, "-m", "smartarray_agent", "write-cache", "enable",
                      "--what", "drive", "--slot", "0", *host.common], env=host.env, timeout=60)
    child.expect(r"Smart Array P440ar in slot 0.*: drive write cache on .*Continue\? \[y/N\]")
    child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == code
    assert host.status()["cache"]["drive_write_cache"] is enabled
    assert len(host.modifies()) == (1 if enabled else 0)


def test_gen10_drive_write_cache_needs_a_usage(tmp_path):
    host = Host(tmp_path, "gen10")
    missing = host.agent("write-cache", "enable", "--what", "drive", "--slot", "0", "--yes")
    assert missing.returncode == 2
    assert "--usage" in missing.stderr
    done = host.agent("write-cache", "enable", "--what", "drive", "--usage", "unconfigured",
                      "--slot", "0", "--yes")
    assert done.returncode == 0, done.stderr
    assert host.status()["cache"]["drive_write_cache_policy"]["unconfigured"] == "enable"
    assert host.modifies() == ["ctrl slot=0 modify drivewritecache=enable usage=unconfigured"
                               " forced"]


def test_logical_drive_caching_off_and_on(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    off = host.agent("write-cache", "disable", "--what", "logical-drive", "1", "--slot", "0")
    assert off.returncode == 0, off.stderr
    assert host.status()["logical_drives"][0]["caching"] is False
    on = host.agent("write-cache", "enable", "--what", "logical-drive", "1", "--slot", "0")
    assert on.returncode == 0, on.stderr
    assert host.status()["logical_drives"][0]["caching"] is True


def test_a_controller_that_ignores_the_change_is_caught_by_the_re_read(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"ignore_modify": True})
    result = host.agent("set-cache-ratio", "50/50", "--slot", "0", "--json")
    assert result.returncode == 5
    report = json.loads(result.stdout)
    assert report["changed"] is False
    assert report["after"]["cache_ratio"] == "10/90"
    assert "controller shows" in result.stderr
    assert host.audit_entries()[-1]["outcome"] == "not_applied"


def test_an_unknown_controller_is_bad_input(tmp_path):
    result = Host(tmp_path, "gen9-battery").agent("set-cache-ratio", "50/50", "--slot", "7")
    assert result.returncode == 2
    assert "no controller with slot 7" in result.stderr


COLLECTING = """
import sys
from smartarray_agent.simulator import vendor_argv
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
cli = VendorCli(tuple(vendor_argv(sys.argv[1])), "simulator")
runner = VendorRunner(cli, HostLock(sys.argv[2], 60), timeout_s=30)
for _ in range(int(sys.argv[3])):
    read_snapshot(runner)
"""


def test_changes_and_a_collecting_daemon_never_overlap_on_the_cli(tmp_path):
    host = Host(tmp_path, "two-controllers", faults={"command_delay_s": 0.05})
    daemon = subprocess.Popen([sys.executable, "-c", COLLECTING, "two-controllers",
                               str(tmp_path / "cli.lock"), "15"], env=host.env)
    for ratio in ("50/50", "25/75", "50/50"):
        result = host.agent("set-cache-ratio", ratio, "--slot", "1")
        assert result.returncode == 0, result.stderr
    assert daemon.wait(120) == 0
    assert overlaps(read_invocations(host.state_dir)) == []
