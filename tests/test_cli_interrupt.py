"""A one-shot command stopped by Ctrl-C, SIGTERM or SIGHUP stops the vendor CLI it started
and exits 128 + the signal's number; the CLI's single-instance lock is free at once for the
next command (issue #30, finding 1)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from smartarray_agent.collectors.ssacli.errors import VendorCommandError
from smartarray_agent.collectors.ssacli.parser import find_error
from smartarray_agent.simulator.dialect import LOCK_CONFLICT

AGENT = [sys.executable, "-m", "smartarray_agent"]


def _instance_lock_held(state: Path) -> bool:
    """Whether a simulator process holds its single-instance lock (as the vendor CLI does)."""
    path = state / "instance.lock"
    if not path.exists():
        return False
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def _status(state: Path, tmp_path: Path, faults: dict, **popen) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env.update(SMARTARRAY_SIM_STATE_DIR=str(state), SMARTARRAY_SIM_FAULTS=json.dumps(faults))
    return subprocess.Popen(
        [*AGENT, "status", "--simulate", "gen9-battery", "-t", "60",
         "--lock-file", str(tmp_path / "cli.lock")],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, **popen)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_status_stops_the_vendor_cli_and_exits_128_plus_its_number(
        tmp_path, signum):
    state = tmp_path / "sim"
    command = _status(state, tmp_path, {"hang": ["ctrl all show config detail"]})
    try:
        deadline = time.monotonic() + 30
        while not _instance_lock_held(state):  # the hanging CLI has started
            assert command.poll() is None, command.communicate()
            assert time.monotonic() < deadline, "the simulator never started"
            time.sleep(0.02)
        command.send_signal(signum)
        _out, err = command.communicate(timeout=30)
    finally:
        command.kill()
    assert command.returncode == 128 + signum, err
    assert "Traceback" not in err
    assert not _instance_lock_held(state), "the vendor CLI outlived the command"
    after = _status(state, tmp_path, {})
    out, err = after.communicate(timeout=60)
    assert after.returncode == 0, err
    assert "P440ar" in out


def test_a_vendor_error_wrapped_over_two_lines_is_reported_whole():
    error = find_error("\n".join(LOCK_CONFLICT) + "\n")
    assert error is not None
    raised = VendorCommandError("ctrl all show config detail", error.message, error.kind,
                                error.detail)
    assert str(raised).endswith("Please terminate the ACU application before running the "
                                "ACU CLI.")
