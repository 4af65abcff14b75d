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

import pexpect
import pytest

from smartarray_agent.collectors.ssacli.errors import VendorCommandError
from smartarray_agent.collectors.ssacli.parser import find_error
from smartarray_agent.simulator.dialect import LOCK_CONFLICT
from tests.agent_process import simulated

from .agent_cli import agent
from .invocations import read_invocations
from .terminal import Terminal

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
    after = agent("status", "--simulate", "gen9-battery", "--lock-file", tmp_path / "cli.lock",
                  env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(state)})
    assert after.returncode == 0, after.stderr  # the next command gets the CLI at once
    assert "P440ar" in after.stdout


def test_a_vendor_error_wrapped_over_two_lines_is_reported_whole():
    error = find_error("\n".join(LOCK_CONFLICT) + "\n")
    assert error is not None
    raised = VendorCommandError("ctrl all show config detail", error.message, error.kind,
                                error.detail)
    assert str(raised).endswith("Please terminate the ACU application before running the "
                                "ACU CLI.")


# -- Ctrl-C as a terminal sends it (issue #43, findings 4 and 5) --------------------------------
# A terminal sends SIGINT to its whole foreground process group. A command started there by a
# harness that itself runs in the background of a non-interactive shell inherits SIGINT
# ignored; it must stop on the Ctrl-C all the same, as it does from an interactive shell.

INHERITED = [pytest.param(signal.SIG_DFL, id="sigint-default"),
             pytest.param(signal.SIG_IGN, id="sigint-ignored-by-the-harness")]


def _in_a_terminal(args: list[str], env: dict[str, str], inherited: int) -> Terminal:
    """The command in the foreground of a terminal of its own (a pty), as a shell starts it."""
    return Terminal([sys.executable, "-m", "smartarray_agent", *args], env=env, timeout=60,
                    sigint_ignored=inherited == signal.SIG_IGN)


def _ctrl_c(terminal: Terminal) -> None:
    """What the terminal does on Ctrl-C: SIGINT to its foreground process group."""
    os.killpg(os.tcgetpgrp(terminal.child_fd), signal.SIGINT)


def _ended(terminal: Terminal) -> tuple[int | None, str]:
    terminal.expect(pexpect.EOF, timeout=30)
    output = terminal.before
    terminal.close()
    return terminal.exitstatus, output


def _simulated_host(tmp_path: Path, faults: dict) -> tuple[Path, dict[str, str], list[str]]:
    state = tmp_path / "sim"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env.update(SMARTARRAY_SIM_STATE_DIR=str(state), SMARTARRAY_SIM_FAULTS=json.dumps(faults))
    common = ["--simulate", "gen9-battery", "--lock-file", str(tmp_path / "cli.lock")]
    return state, env, common


def _wait_for_the_cli(state: Path, terminal: Terminal) -> None:
    deadline = time.monotonic() + 30
    while not _instance_lock_held(state):  # the hanging CLI has started
        assert terminal.isalive(), terminal.read_nonblocking(10000, 0)
        assert time.monotonic() < deadline, "the simulator never started"
        time.sleep(0.02)


@pytest.mark.parametrize("inherited", INHERITED)
def test_ctrl_c_in_a_terminal_stops_status_with_130(tmp_path, inherited):
    state, env, common = _simulated_host(tmp_path, {"hang": ["ctrl all show config detail"]})
    terminal = _in_a_terminal(["status", "-t", "30", *common], env, inherited)
    _wait_for_the_cli(state, terminal)
    _ctrl_c(terminal)
    code, output = _ended(terminal)
    assert code == 130, output  # the CLI hangs for good: not the 30 s timeout's end either
    assert "did not finish" not in output and "Traceback" not in output
    assert not _instance_lock_held(state), "the vendor CLI outlived the command"


@pytest.mark.parametrize("inherited", INHERITED)
def test_ctrl_c_in_a_terminal_stops_a_change_before_it_is_sent(tmp_path, inherited):
    state, env, common = _simulated_host(tmp_path, {"hang": ["ctrl all show config detail"]})
    audit = tmp_path / "audit.jsonl"
    terminal = _in_a_terminal(
        ["write-cache", "disable", "--what", "no-battery", "--slot", "0", "--yes", "-t", "30",
         "--audit-file", str(audit), *common], env, inherited)
    _wait_for_the_cli(state, terminal)
    _ctrl_c(terminal)
    code, output = _ended(terminal)
    assert code == 130, output
    assert [c for i in read_invocations(state) for c in i.commands if "modify" in c] == []
    assert not audit.exists() or audit.read_text() == ""  # no intent: nothing was sent
    assert not _instance_lock_held(state), "the vendor CLI outlived the command"


def _exit_code_row(code: int) -> str:
    """The row of docs/cli.md's exit code table that holds ``code``."""
    table = (Path(__file__).parent.parent / "docs" / "cli.md").read_text().split(
        "## Exit codes", 1)[1].split("\n\n", 2)[1]
    for line in table.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and str(code) in [c.strip() for c in cells[1].split(",")]:
            return cells[2]
    raise AssertionError(f"docs/cli.md's exit code table has no row for {code}")


@pytest.mark.parametrize("inherited", INHERITED)
def test_ctrl_c_in_a_terminal_stops_run_with_the_code_the_docs_give(tmp_path, inherited):
    """A daemon stopped on purpose exits 0 (systemd counts it a clean stop); docs/cli.md's
    table says so for ``run`` (it used to give 130, which ``run`` never exited with)."""
    config = tmp_path / "config.toml"
    config.write_text(simulated(tmp_path, "gen9-battery"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env["SMARTARRAY_SIM_STATE_DIR"] = str(tmp_path / "sim")
    terminal = _in_a_terminal(["run", "--config", str(config), "--listen", "127.0.0.1:0"],
                              env, inherited)
    terminal.expect("listening on http://")
    _ctrl_c(terminal)
    code, output = _ended(terminal)
    assert code == 0, output
    assert "SIGINT: stopping" in output
    row = _exit_code_row(code)
    assert "`run`" in row and "SIGINT" in row, row
