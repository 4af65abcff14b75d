"""What the vendor CLI may cost the agent and how it recovers: its output is capped, one-shot
or console (a CLI that prints more is ended and fails the round instead of filling the
agent's memory), and a console that sees no controllers gets one fresh start."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.ssacli import run
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import CliOutputTooLarge, VendorCommandError
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.simulator import ScenarioError, vendor_argv
from smartarray_agent.simulator.state import private_directory

from .invocations import read_invocations

# A "CLI" that prints MiB of lines, then stays alive until it is ended.
FLOOD = ("import sys, time\n"
         "line = b'   Controller Status: OK' + b' ' * 1000 + b'\\n'\n"
         "for _ in range(int(sys.argv[1]) * 1024):\n"
         "    sys.stdout.buffer.write(line)\n"
         "sys.stdout.flush()\n"
         "time.sleep(int(sys.argv[2]))\n")


def flood(mib: int, linger_s: int = 0) -> VendorCli:
    return VendorCli((sys.executable, "-c", FLOOD, str(mib), str(linger_s)), "simulator")


def test_output_past_the_cap_ends_the_cli_and_is_not_kept(monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 1 * 2**20)
    with pytest.raises(CliOutputTooLarge, match="printed more than 1 MiB"):
        flood(4, linger_s=60).run(["ctrl", "all", "show"], timeout_s=30)


def test_output_under_the_cap_is_read_whole(monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 8 * 2**20)
    result = flood(2).run(["ctrl", "all", "show"], timeout_s=30)
    assert result.returncode == 0
    assert result.output.count("Controller Status: OK") == 2 * 1024


def test_a_flooding_cli_fails_the_collection_with_the_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 1 * 2**20)
    runner = VendorRunner(flood(4, linger_s=60), HostLock(tmp_path / "cli.lock", 5),
                          timeout_s=30)
    with pytest.raises(CollectionError, match="printed more than 1 MiB"):
        read_snapshot(runner)


SHOW = ["ctrl", "all", "show", "config", "detail"]


def simulated(tmp_path, monkeypatch, **faults: object) -> VendorRunner:
    """A runner on the simulator, with ``faults`` injected."""
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "sim"))
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps(faults))
    return VendorRunner(VendorCli(tuple(vendor_argv("gen9-battery")), "simulator"),
                        HostLock(tmp_path / "cli.lock", 10), timeout_s=30)


def test_a_console_printing_past_the_cap_is_ended_and_the_next_call_starts_a_new_one(
        tmp_path, monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 1 * 2**20)
    runner = simulated(tmp_path, monkeypatch, flood=["show config detail"],
                       flood_bytes=4 * 2**20)
    with runner.session():  # one job
        assert "Smart Array" in runner.run(["ctrl", "all", "show", "status"])
        first = runner._console.pid
        with pytest.raises(CliOutputTooLarge, match="printed more than 1 MiB"):
            runner.run(SHOW)
        assert runner._console is None
        with pytest.raises(ProcessLookupError):  # ended and reaped
            os.kill(first, 0)
        assert "Smart Array" in runner.run(["ctrl", "all", "show", "status"])
        assert runner._console.pid != first
    assert [inv.mode for inv in read_invocations(tmp_path / "sim")] == ["console"] * 2


def test_a_flooding_console_fails_the_collection_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 1 * 2**20)
    runner = simulated(tmp_path, monkeypatch, flood=["*"], flood_bytes=4 * 2**20)
    with pytest.raises(CollectionError, match="printed more than 1 MiB"):
        read_snapshot(runner)


def test_a_console_answer_under_the_cap_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 8 * 2**20)
    runner = simulated(tmp_path, monkeypatch, flood=["show config detail"],
                       flood_bytes=2 * 2**20)
    output = runner.run(SHOW)
    assert output.count("Controller Status: OK") >= 2 * 2**20 // 1024
    assert "Smart Array P440ar in Slot 0" in output  # the answer after the filler


# A collection through the console while the simulator prints 300 MB, in a small, fresh
# interpreter that prints its peak RSS (KiB): before the cap, the daemon grew to 1.07 GB.
_CONSOLE_FLOOD = """import resource, sys
from pathlib import Path
from smartarray_agent.simulator import vendor_argv
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
runner = VendorRunner(VendorCli(tuple(vendor_argv("gen9-battery")), "simulator"),
                      HostLock(Path(sys.argv[1]), 10), timeout_s=60)
try:
    runner.run(["ctrl", "all", "show", "config", "detail"])
except Exception as error:
    print(type(error).__name__, error)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_a_console_flood_costs_the_cap_not_the_flood(tmp_path):
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim"),
           "SMARTARRAY_SIM_FAULTS": json.dumps({"flood": ["*"], "flood_bytes": 300_000_000})}
    done = subprocess.run([sys.executable, "-c", _CONSOLE_FLOOD, str(tmp_path / "cli.lock")],
                          env=env, capture_output=True, text=True, timeout=300)
    error, rss_kib = done.stdout.splitlines()
    assert error.startswith("CliOutputTooLarge") and "printed more than 16 MiB" in error
    assert int(rss_kib) < 120 * 1024, rss_kib


def test_a_console_that_sees_no_controllers_is_closed_and_the_next_call_starts_a_new_one(
        tmp_path, monkeypatch):
    runner = simulated(tmp_path, monkeypatch, no_controllers=True)
    with runner.session():  # one job
        for _ in range(2):
            with pytest.raises(VendorCommandError) as caught:
                runner.run(SHOW)
            assert caught.value.kind == "no_controllers"
            assert runner._console is None
    assert [len(inv.commands) for inv in read_invocations(tmp_path / "sim")] == [1, 1]


def test_the_simulators_fallback_state_dir_must_be_private(tmp_path):
    """A name in /tmp another user planted (a link, a directory others may write) is
    refused; a missing one is made 0700."""
    made = private_directory(tmp_path / "made")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    link = tmp_path / "link"
    link.symlink_to(made)
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    for planted in (link, open_to_all):
        with pytest.raises(ScenarioError, match="not a private directory"):
            private_directory(planted)
