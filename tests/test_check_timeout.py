"""``check -t`` bounds the whole plugin, as the monitoring plugins' guidelines mean it (issue
#29, finding 6): when the time is up, whatever runs (the wait for the host lock, the vendor
CLI, the parse), the check says what timed out, exits UNKNOWN (3) and leaves no vendor CLI
behind. It used to bound each vendor CLI run alone, so a lock wait or a second run overran."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from smartarray_agent.cli.deadline import TimeUp, deadline
from smartarray_agent.collectors.ssacli.lock import HostLock, process_start
from tests import detaching_cli

from .agent_cli import Ran, agent
from .invocations import read_invocations

UNKNOWN = 3


def check(tmp_path: Path, *args: str, faults: dict | None = None) -> Ran:
    """Run the check on the simulator (its host in ``tmp_path/sim``, the lock in
    ``tmp_path/cli.lock``, a lock wait of 60 s). That it ended at all shows the bound: what
    it waits on (a hung CLI, a held lock) would never end by itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env.update(SMARTARRAY_SIM_STATE_DIR=str(tmp_path / "sim"),
               SMARTARRAY_SIM_FAULTS=json.dumps(faults or {}))
    config = tmp_path / "config.toml"
    config.write_text("[ssacli]\nlock_wait_s = 60\n")
    return agent("check", "--config", str(config), "--lock-file", str(tmp_path / "cli.lock"),
                 "--simulate", "gen9-battery", *args, env=env)


def assert_no_vendor_cli_left(state: Path) -> None:
    invocations = read_invocations(state)
    assert invocations, "the simulator never ran"
    running = [i.pid for i in invocations if process_start(i.pid) is not None]
    assert running == [], "the vendor CLI outlived the check"


def test_a_hung_vendor_cli_is_ended_at_the_plugin_timeout(tmp_path):
    result = check(tmp_path, "-t", "2", faults={"hang": ["ctrl all show config detail"]})
    assert result.returncode == UNKNOWN, result.stdout + result.stderr
    assert result.stdout == ("SMARTARRAY UNKNOWN - simulator ctrl all show config detail timed "
                             "out after 2 s\n")
    assert_no_vendor_cli_left(tmp_path / "sim")


def test_the_timeout_holds_across_several_vendor_cli_runs(tmp_path):
    """The read answers at once and the version (the second run, the first time, of a CLI
    without a console) hangs: each run stayed under a per-run ``-t``, the check did not, and
    said OK late. The -t leaves the read the time it takes on a busy machine."""
    result = check(tmp_path, "-t", "10", faults={"hang": ["version"], "console_refused": True})
    assert result.returncode == UNKNOWN, result.stdout + result.stderr
    assert result.stdout == "SMARTARRAY UNKNOWN - simulator version timed out after 10 s\n"
    assert_no_vendor_cli_left(tmp_path / "sim")


def test_the_timeout_bounds_the_check_whatever_a_grandchild_of_the_cli_does(tmp_path):
    """The CLI hangs after starting a grandchild that moved to a session of its own and
    keeps the CLI's output open: the check still ends at -t, ends the grandchild, and lets
    go of the host lock (it used to wait for the end of file for ever, holding the lock;
    issue #39, finding 6). A process: its process group and session are the subject; its -t
    leaves the interpreter's start time to reach the CLI on a busy machine."""
    program, pid_file = detaching_cli.write(tmp_path, hang=True)
    with detaching_cli.cleaned_up(pid_file):
        result = subprocess.run(
            [sys.executable, "-m", "smartarray_agent", "check", "--cli", str(program), "-t",
             "10", "--lock-file", str(tmp_path / "cli.lock")],
            capture_output=True, text=True, timeout=120)
        assert result.returncode == UNKNOWN, result.stdout + result.stderr
        assert result.stdout == ("SMARTARRAY UNKNOWN - ssacli ctrl all show config detail timed "
                                 "out after 10 s\n")
        assert not detaching_cli.alive(pid_file), "the grandchild outlived the check"
        HostLock(tmp_path / "cli.lock", 0).acquire()  # free: LockTimeout if it were held


def test_a_wait_for_the_host_lock_ends_at_the_plugin_timeout(tmp_path):
    holder = HostLock(tmp_path / "cli.lock", 0)
    holder.acquire()  # another process's command, which runs on
    try:
        result = check(tmp_path, "-t", "2")
    finally:
        holder.release()
    assert result.returncode == UNKNOWN, result.stdout + result.stderr
    assert result.stdout.startswith(
        f"SMARTARRAY UNKNOWN - the wait for the host lock {tmp_path / 'cli.lock'}, held by "
        f"pid {os.getpid()} (")
    assert result.stdout.endswith(", timed out after 2 s\n")  # not the 60 s of the file
    assert read_invocations(tmp_path / "sim") == []  # the CLI never started


@pytest.mark.parametrize("args", [["-t", "0.5"], ["-t", "0"], ["-t", "nan"], ["-t", "x"]])
def test_a_timeout_below_one_second_or_not_a_number_is_a_usage_error(tmp_path, args):
    result = check(tmp_path, *args)
    assert result.returncode == UNKNOWN
    assert result.stdout.startswith("SMARTARRAY UNKNOWN - usage: ")


def test_the_deadline_interrupts_work_in_python_too():
    """The parse, or anything else between the vendor CLI's runs."""
    with pytest.raises(TimeUp) as caught, deadline(0.2, lambda: "the parse"):
        while True:
            pass
    assert str(caught.value) == "the parse timed out after 0.2 s"


def test_the_deadline_is_gone_after_its_block():
    before = signal.getsignal(signal.SIGALRM)
    with deadline(0.2, lambda: "nothing"):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
