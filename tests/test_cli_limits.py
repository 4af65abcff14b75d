"""What the vendor CLI may cost the agent and how it recovers: its output is capped (a CLI
that prints more is ended and fails the round instead of filling the agent's memory), and a
console that sees no controllers gets one fresh start."""

from __future__ import annotations

import stat
import sys

import pytest

from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.simulator import ScenarioError, vendor_argv
from smartarray_agent.collectors.simulator.state import private_directory
from smartarray_agent.collectors.ssacli import run
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import VendorCommandError
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.run import CliOutputTooLarge, run_once
from smartarray_agent.collectors.ssacli.runner import VendorRunner

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
        run_once(flood(4, linger_s=60), ["ctrl", "all", "show"], timeout_s=30)


def test_output_under_the_cap_is_read_whole(monkeypatch):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 8 * 2**20)
    result = run_once(flood(2), ["ctrl", "all", "show"], timeout_s=30)
    assert result.returncode == 0
    assert result.output.count("Controller Status: OK") == 2 * 1024


def test_a_flooding_cli_fails_the_collection_with_the_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "MAX_OUTPUT_BYTES", 1 * 2**20)
    runner = VendorRunner(flood(4, linger_s=60), HostLock(tmp_path / "cli.lock", 5),
                          timeout_s=30, console=False)
    try:
        with pytest.raises(CollectionError, match="printed more than 1 MiB"):
            read_snapshot(runner)
    finally:
        runner.close()


def test_a_console_that_sees_no_controllers_is_restarted_once_then_the_error_stands(
        tmp_path, monkeypatch):
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "sim"))
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", '{"no_controllers": true}')
    runner = VendorRunner(VendorCli(tuple(vendor_argv("gen9-battery")), "simulator"),
                          HostLock(tmp_path / "cli.lock", 10), timeout_s=30, console=True)
    try:
        with pytest.raises(VendorCommandError) as caught:
            runner.run(["ctrl", "all", "show", "config", "detail"])
        assert caught.value.kind == "no_controllers"
        assert runner.stats.process_starts == 2  # the first console, and one new one
    finally:
        runner.close()


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
