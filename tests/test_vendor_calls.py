"""What a command leaves of a vendor CLI that misbehaves, run as an operator runs it: a
command that timed out is not run again (issue #50 item 6), and no descendant of the CLI
outlives the call, a fully detached one included (issue #50 item 7)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from smartarray_agent.simulator import vendor_argv
from tests import detaching_cli

from .agent_cli import agent

VENDOR_ERROR = 1


@pytest.mark.parametrize("command", [["status"], ["check", "-t", "30"]])
def test_status_and_check_leave_no_descendant_of_the_cli(tmp_path, command):
    program, pid_file = detaching_cli.write(
        tmp_path, detached=True, then=list(vendor_argv("gen9-battery", tmp_path / "sim")))
    with detaching_cli.cleaned_up(pid_file):
        result = agent(*command, "--cli", program, "--lock-file", tmp_path / "cli.lock")
        assert result.returncode == 0, result.stdout + result.stderr
        assert detaching_cli.pids(pid_file)
        assert not detaching_cli.alive(pid_file), "a grandchild outlived the command"


def test_status_runs_a_command_that_timed_out_once(tmp_path):
    """A CLI that hangs, console or not: ``status`` used to time out in the console, then run
    the same command one-shot and time out again (benchmarks/hung_cli.py times it)."""
    started = tmp_path / "started"
    program = tmp_path / "ssacli"
    program.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, time
        with open({str(started)!r}, "a") as f:
            print(sys.argv[1:], file=f)
        time.sleep(300)
        """))
    program.chmod(0o755)
    result = agent("status", "--cli", program, "--timeout", "2", "--lock-file",
                   tmp_path / "cli.lock")
    assert result.returncode == VENDOR_ERROR, result.stdout + result.stderr
    assert "did not finish in 2 s" in result.stderr
    assert started.read_text().splitlines() == ["[]"]  # the console, and nothing after it
