"""What a change costs in vendor CLI starts (issue #40), counted from the simulator's
invocation log, and a console that misbehaves at each step of a change: every such change
ends in a recorded outcome and sends its modify at most once."""

from __future__ import annotations

import json
import logging
import sys
import textwrap

import pexpect
import pytest

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import CliTimeout
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.collectors.ssacli.runner import log as runner_log
from smartarray_agent.simulator import vendor_argv

from . import matrix
from .invocations import read_invocations
from .test_change import Host
from .test_write_faults import NBWC_ON, outcomes, prompt

RATIO = ("set-cache-ratio", "25/75", "--slot", "0")


def starts(host: Host) -> int:
    return len(read_invocations(host.state_dir))


def test_a_change_that_asks_nothing_starts_the_cli_once(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    result = host.agent(*RATIO)
    assert result.returncode == 0, result.stderr
    assert starts(host) == 1
    assert host.modifies() == ["ctrl slot=0 modify cacheratio=25/75"]
    assert outcomes(host) == [("intent", None), ("outcome", "changed")]


def test_a_dry_run_and_a_yes_read_once(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    assert host.agent(*NBWC_ON, "--dry-run").returncode == 0
    assert starts(host) == 1
    reads = [c for inv in read_invocations(host.state_dir) for c in inv.commands
             if "show config" in c]
    assert reads == ["ctrl all show config detail"]
    assert host.agent(*NBWC_ON, "--yes").returncode == 0
    assert starts(host) == 2


def test_a_change_that_asks_keeps_its_first_read_and_the_locked_one(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    child = prompt(host, *NBWC_ON)
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    invocations = read_invocations(host.state_dir)
    assert len(invocations) == 2
    first, locked = (inv.commands for inv in invocations)
    assert first == ["ctrl all show config detail"]  # what the question shows
    assert locked == ["ctrl all show config detail", "ctrl slot=0 modify "
                      "nobatterywritecache=enable", "ctrl slot=0 show config detail"]


def test_all_changes_every_controller_in_one_session(tmp_path):
    host = Host(tmp_path, "large")
    result = host.agent("set-cache-ratio", "25/75", "--all", "--json")
    assert result.returncode == 0, result.stderr
    changed = [r for r in json.loads(result.stdout)["results"] if r["changed"]]
    assert len(changed) > 1
    assert len(host.modifies()) == len(changed)
    assert starts(host) == 1


def test_status_starts_the_cli_once(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    host.status()
    assert starts(host) == 1
    invocation, = read_invocations(host.state_dir)
    assert "version" not in invocation.commands  # the console's banner says it


# -- a console that misbehaves at each step ---------------------------------------------------

READ = "ctrl all show config detail"
QUERY = "cacheratio=?"
MODIFY = "modify cacheratio=25/75"
MODIFY_SENT = "ctrl slot=0 modify cacheratio=25/75"
VERIFY = "ctrl slot=0 show config detail"


SENT = [("intent", None)]
FAULTS = ("crash", "hang", "prompt_garbled", "garbage", "prompt")
STEPS = (READ, QUERY, MODIFY, VERIFY)
# The default run's sample (every case with --full-matrix, tests/matrix.py): every fault, every
# step and every exit code, the modify under each kind of fault that ends it, and few of the
# cases that wait for the timeout (a hang, a prompt never seen). The others each share their
# fault, step and outcome with a case kept.
SAMPLE = {("crash", READ), ("prompt_garbled", READ), ("garbage", READ), ("crash", QUERY),
          ("crash", MODIFY), ("hang", MODIFY), ("prompt", MODIFY), ("garbage", VERIFY)}
CONSOLE_FAULTS = [
    # Before the modify, nothing is sent. No command is run again (it may have done its
    # work): a read whose console died fails.
    ("crash", READ, 1, []),
    ("hang", READ, 1, []),
    ("prompt_garbled", READ, 1, []),
    ("garbage", READ, 2, []),
    ("crash", QUERY, 1, []),
    ("hang", QUERY, 1, []),
    # During the modify: never sent again; the verifying read says what happened.
    ("crash", MODIFY, 0, [*SENT, ("outcome", "changed")]),  # it crashes after applying
    ("hang", MODIFY, 5, [*SENT, ("outcome", "not_applied")]),
    ("garbage", MODIFY, 5, [*SENT, ("outcome", "not_applied")]),
    ("prompt_garbled", MODIFY, 0, [*SENT, ("outcome", "changed")]),
    ("prompt", MODIFY, 5, [*SENT, ("outcome", "not_applied")]),  # a (y/n) is answered no
    # During the verifying read: unknown.
    ("crash", VERIFY, 8, [*SENT, ("outcome", "unknown")]),
    ("hang", VERIFY, 8, [*SENT, ("outcome", "unknown")]),
    ("garbage", VERIFY, 8, [*SENT, ("outcome", "unknown")]),
    ("prompt_garbled", VERIFY, 8, [*SENT, ("outcome", "unknown")]),
]


def test_the_sample_has_every_fault_step_and_exit_code():
    sample = [case for case in CONSOLE_FAULTS if case[:2] in SAMPLE]
    assert len(sample) == len(SAMPLE)
    for column, values in enumerate((FAULTS, STEPS, {case[2] for case in CONSOLE_FAULTS})):
        assert {case[column] for case in sample} == set(values)


@pytest.mark.parametrize(("fault", "step", "code", "audited"),
                         matrix.chosen(CONSOLE_FAULTS, lambda case: case[:2] in SAMPLE))
def test_a_console_that_misbehaves_ends_in_a_recorded_outcome(tmp_path, fault, step, code,
                                                              audited):
    host = Host(tmp_path, "gen9-battery", faults={fault: [step], "console_only": True})
    # The timeout a hang waits for: room for the simulator's start on a loaded machine (a
    # console that does not start in time is left for one-shot runs, another path).
    result = host.agent(*RATIO, "--timeout", "3")
    assert result.returncode == code, result.stderr
    assert (outcomes(host) if host.audit.exists() else []) == audited  # none: nothing judged
    assert host.modifies() == ([MODIFY_SENT] if audited else [])  # never twice
    assert all(inv.end_monotonic is not None for inv in read_invocations(host.state_dir))


def test_a_console_that_cannot_be_had_falls_back_to_one_shot_runs(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"console_refused": True})
    result = host.agent(*RATIO)
    assert result.returncode == 0, result.stderr
    assert outcomes(host) == [("intent", None), ("outcome", "changed")]
    modes = [inv.mode for inv in read_invocations(host.state_dir)]
    assert modes == ["console", "argv", "argv", "argv", "argv"]  # read, query, modify, verify


def test_the_fallback_is_in_the_debug_log(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps({"console_refused": True}))
    cli = VendorCli(tuple(vendor_argv("gen9-battery", state_dir=tmp_path / "sim")),
                    "simulator")
    runner = VendorRunner(cli, HostLock(tmp_path / "cli.lock", 10), timeout_s=30)
    with caplog.at_level(logging.DEBUG, logger=runner_log.name), runner.session():
        runner.run(["ctrl", "all", "show", "status"])
        runner.run(["version"])
    assert "the CLI has no console" in caplog.text and "runs one-shot" in caplog.text
    assert [inv.mode for inv in read_invocations(tmp_path / "sim")] == ["console", "argv",
                                                                        "argv"]


def test_a_console_that_never_shows_its_prompt_is_a_timeout_not_run_again(tmp_path):
    """Its command is not run again one-shot: it would time out again (issue #50 item 6:
    ``status --timeout 5`` took twice its timeout, console then one-shot)."""
    program = tmp_path / "ssacli"
    argv = vendor_argv("gen9-battery", state_dir=tmp_path / "sim")
    program.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import os, sys, time
        if not sys.argv[1:]:  # a console that prints no prompt
            print("HP Array Configuration Utility CLI", flush=True)
            time.sleep(60)
        os.execv({argv[0]!r}, {argv!r} + sys.argv[1:])
        """))
    program.chmod(0o755)
    runner = VendorRunner(VendorCli((str(program),), "ssacli"),
                          HostLock(tmp_path / "cli.lock", 10), timeout_s=2)
    with pytest.raises(CliTimeout, match="did not finish in 2 s"):
        runner.run(["ctrl", "all", "show", "status"])
    assert read_invocations(tmp_path / "sim") == []  # never run one-shot
