"""Injected faults, the battery timeline, the single-instance lock and the invocation log.
The simulator answers in this process (tests/sim_cli.py), as a process where its process is
the subject: a hang and its kill, a console holding the single-instance lock, a command's
delay in the console."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pytest

from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.simulator import resolve_scenario, vendor_argv

from .invocations import overlaps, read_invocations
from .sim_cli import sim_bytes
from .terminal import Terminal

LOCK_ERROR = "Error: Another instance of ACU is already running (possibly a service). Please "


def env_with(faults: dict | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    return {**env, "SMARTARRAY_SIM_FAULTS": json.dumps(faults or {}), **extra}


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: bytes
    stderr: str


def sim(state: Path, *words: str, scenario: str = "gen9-battery", faults: dict | None = None,
        **extra: str) -> Done:
    """Run the simulator once (in this process); output as bytes."""
    return Done(*sim_bytes("--scenario", scenario, "--state-dir", state, *words,
                           env=env_with(faults, **extra)))


def startup_s(state: Path) -> float:
    """The last simulator run's own start-up time, from its invocation log: its ``start`` event
    to its first ``command`` event (both CLOCK_MONOTONIC), free of process-spawn noise."""
    records = [json.loads(line) for line in (state / "invocations.jsonl").read_text().splitlines()]
    last = records[-1]["id"]
    start = next(r["monotonic"] for r in records if r["id"] == last and r["event"] == "start")
    command = next(r["monotonic"] for r in records if r["id"] == last and r["event"] == "command")
    return command - start


def wait_for(condition, timeout_s: float = 30.0) -> None:
    """Poll ``condition`` (a file the simulator writes) until it holds."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_startup_delay_and_the_nonsa_scan(tmp_path):
    # Lower bounds only: a loaded machine makes a delay longer, never shorter. The bypassed scan
    # is compared with a delay far longer than any start-up.
    sim(tmp_path, "version", faults={"startup_delay_s": 0.4})
    assert startup_s(tmp_path) >= 0.4
    faults = {"nonsa_scan_delay_s": 3.0}
    sim(tmp_path, "version", faults=faults)
    assert startup_s(tmp_path) >= 3.0
    sim(tmp_path, "version", faults=faults, INFOMGR_BYPASS_NONSA="1")
    assert startup_s(tmp_path) < 3.0


def test_command_delay_applies_to_each_console_command(tmp_path):
    child = Terminal(vendor_argv("gen9-battery", tmp_path), timeout=10,
                     env=env_with({"command_delay_s": 0.3}))
    child.expect_exact("=> ")
    for _ in range(2):
        started = time.monotonic()
        child.sendline("ctrl all show status")
        child.expect_exact("=> ")
        assert time.monotonic() - started >= 0.3
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_hang_sleeps_until_killed_and_the_kill_is_logged(tmp_path):
    faults = {"hang": ["show config detail"]}
    assert sim(tmp_path, "ctrl", "all", "show", faults=faults).returncode == 0  # not named
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([*vendor_argv("gen9-battery", tmp_path), "ctrl", "all", "show", "config",
                        "detail"], env=env_with(faults), capture_output=True, timeout=1)
    process = subprocess.Popen(
        [*vendor_argv("gen9-battery", tmp_path), "ctrl", "all", "show", "config", "detail"],
        env=env_with(faults),
        stdout=subprocess.PIPE,
    )
    # Hanging once its command is logged (the signal handlers are set before that).
    wait_for(lambda: any(inv.pid == process.pid and inv.commands
                         for inv in read_invocations(tmp_path)))
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 128 + signal.SIGTERM
    assert process.stdout.read() == b""
    last = read_invocations(tmp_path)[-1]
    assert (last.pid, last.exit_code) == (process.pid, 143)
    assert last.commands == ["ctrl all show config detail"]


def test_crash_prints_part_of_the_answer_and_exits_non_zero(tmp_path):
    full = sim(tmp_path, "ctrl", "all", "show", "config", "detail").stdout
    crashed = sim(tmp_path, "ctrl", "all", "show", "config", "detail", faults={"crash": ["*"]})
    assert crashed.returncode == 134
    assert 0 < len(crashed.stdout) < len(full) and full.startswith(crashed.stdout)
    code = sim(tmp_path, "version", faults={"crash": ["version"], "crash_exit_code": 139})
    assert code.returncode == 139


def test_garbage_is_not_cli_output(tmp_path):
    done = sim(tmp_path, "ctrl", "all", "show", "config", "detail", faults={"garbage": ["*"]})
    assert done.returncode == 0 and len(done.stdout) > 1000
    with pytest.raises(UnicodeDecodeError):
        done.stdout.decode("utf-8")
    with pytest.raises(ParseError):
        parse(done.stdout)


def test_lock_conflict_fault(tmp_path):
    done = sim(tmp_path, "ctrl", "all", "show", faults={"lock_conflict": True})
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    assert lines[:3] == [
        "",
        LOCK_ERROR,
        "terminate the ACU application before running the ACU CLI.",
    ]
    assert parse(done.stdout).error.kind == "lock_conflict"


def test_a_second_instance_meets_the_lock_conflict_and_the_log_shows_the_overlap(tmp_path):
    child = Terminal(vendor_argv("gen9-battery", tmp_path), timeout=10, env=env_with())
    child.expect_exact("=> ")
    refused = sim(tmp_path, "ctrl", "all", "show", "status")
    assert refused.returncode == 1 and LOCK_ERROR in refused.stdout.decode()  # the console's
    allowed = sim(tmp_path, "ctrl", "all", "show", "status", faults={"single_instance": False})
    assert allowed.returncode == 0
    child.sendline("exit")
    child.expect(pexpect.EOF)
    after = sim(tmp_path, "ctrl", "all", "show", "status")
    assert after.returncode == 0
    console, first, second, last = read_invocations(tmp_path)
    assert console.mode == "console" and console.end_monotonic is not None
    assert [first.exit_code, second.exit_code, last.exit_code] == [1, 0, 0]
    assert overlaps([console, first, second, last]) == [(console, first), (console, second)]


def test_sequential_calls_never_overlap_and_the_log_has_every_field(tmp_path):
    for words in (["ctrl", "all", "show"], ["version"], ["ctrl", "slot=9", "show"]):
        sim(tmp_path, *words)
    invocations = read_invocations(tmp_path)
    assert overlaps(invocations) == []
    assert [inv.exit_code for inv in invocations] == [0, 0, 1]
    first = invocations[0]
    assert first.argv[-3:] == ["ctrl", "all", "show"] and first.mode == "argv"
    assert first.start_monotonic < first.end_monotonic < invocations[1].start_monotonic
    assert first.start_wall <= first.end_wall and first.pid > 0
    records = [json.loads(line) for line in (tmp_path / "invocations.jsonl").read_text().split("\n")
               if line]  # fmt: skip
    assert [r["event"] for r in records[:3]] == ["start", "command", "end"]


@pytest.mark.parametrize(
    ("scenario", "first_line", "lines"),
    [
        ("hpacucli-legacy", "Error: No controllers detected.", 1),
        ("gen9-battery", "Error: No controllers detected. Possible causes:", 4),
    ],
)
def test_no_controllers_in_the_generation_s_words(tmp_path, scenario, first_line, lines):
    done = sim(tmp_path, "ctrl", "all", "show", "config", "detail", scenario=scenario,
               faults={"no_controllers": True})  # fmt: skip
    assert done.returncode == 1
    out = done.stdout.decode().splitlines()
    assert out[1] == first_line and len([line for line in out if line]) == lines
    assert parse(done.stdout).error.kind == "no_controllers"
    assert sim(tmp_path, "version", faults={"no_controllers": True}).returncode == 0


def test_the_battery_timeline_recharges_then_turns_ok(tmp_path):
    scenario = tmp_path / "charging.toml"
    text = resolve_scenario("recharging").read_text().replace("after_s = 60", "after_s = 0.6")
    scenario.write_text(text)
    before = parse(sim(tmp_path / "s", "ctrl", "all", "show", "status",
                       scenario=str(scenario)).stdout).controllers[0]  # fmt: skip
    assert (before.backup_power.status, before.cache.status) == (
        "recharging",
        "temporarily_disabled",
    )

    def now():  # as the CLI shows it now
        return parse(sim(tmp_path / "s", "ctrl", "all", "show", "detail",
                         scenario=str(scenario)).stdout).controllers[0]

    wait_for(lambda: now().backup_power.status == "ok")  # once 0.6 s have passed
    after = now()
    assert (after.backup_power.status, after.cache.status) == ("ok", "ok")
    assert after.cache.status_details is None


def test_bad_fault_overrides_are_refused_with_the_reason(tmp_path):
    done = sim(tmp_path, "version", faults={"hnag": ["*"]})
    assert done.returncode == 2 and "SMARTARRAY_SIM_FAULTS" in done.stderr
    assert "hnag" in done.stderr
