"""The runner against the simulator: argv and console, every injected fault, the host lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import (
    CliFailed,
    CliTimeout,
    ConsoleDied,
    VendorCommandError,
)
from smartarray_agent.collectors.ssacli.lock import HostLock, LockTimeout
from smartarray_agent.collectors.ssacli.processes import GRACE_S, end_groups
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.simulator import vendor_argv
from tests import detaching_cli

from .invocations import overlaps, read_invocations

MODES = [pytest.param(False, id="argv"), pytest.param(True, id="console")]


@pytest.fixture
def sim(tmp_path, monkeypatch):
    """A simulated CLI with its own state directory; faults as keyword arguments."""

    def make(scenario: str = "gen9-battery", **faults) -> VendorCli:
        if faults:
            monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps(faults))
        return VendorCli(tuple(vendor_argv(scenario, state_dir=tmp_path / "sim")), "simulator")

    return make


class Reader:
    """A runner and the collector's read path over it."""

    def __init__(self, runner: VendorRunner) -> None:
        self.runner = runner

    def collect(self):
        return read_snapshot(self.runner)

    def close(self) -> None:
        self.runner.close()


@pytest.fixture
def collectors(tmp_path):
    made: list[Reader] = []

    def make(cli: VendorCli, console: bool, timeout_s: float = 15, wait_s: float = 15):
        collector = Reader(VendorRunner(cli, HostLock(tmp_path / "cli.lock", wait_s),
                                        timeout_s=timeout_s, console=console))
        made.append(collector)
        return collector

    yield make
    for collector in made:
        collector.close()


def _processes_mentioning(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("console", MODES)
def test_collects_the_scenario(sim, collectors, console):
    snapshot = collectors(sim("two-controllers"), console).collect()
    assert len(snapshot.controllers) == 2
    assert all(c.cache.status is not None for c in snapshot.controllers)


def test_console_pays_the_start_up_once_and_makes_one_call_per_collection(sim, collectors,
                                                                          tmp_path):
    cli = sim("two-controllers", startup_delay_s=0.3)
    console, oneshot = collectors(cli, True), collectors(cli, False)
    by_console = [console.collect() for _ in range(3)]
    console.close()  # its session holds the host lock; one-shot runs would wait for it
    by_oneshot = [oneshot.collect() for _ in range(3)]
    assert by_console == by_oneshot
    assert by_console[0].cli_version == "3.10.3.0"  # the console's banner says it
    # else: a console for each collection, whose banner says the version too
    assert [(inv.mode, len(inv.commands)) for inv in read_invocations(tmp_path / "sim")] == [
        ("console", 3), *[("console", 1)] * 3]


@pytest.mark.parametrize("console", MODES)
def test_a_hung_cli_is_killed_at_the_timeout_and_leaves_no_process(sim, collectors, console,
                                                                   tmp_path):
    collector = collectors(sim(hang=["ctrl all show config detail"]), console, timeout_s=1)
    with pytest.raises(CollectionError, match="did not finish in 1 s") as caught:
        collector.collect()
    assert isinstance(caught.value.__cause__, CliTimeout)
    assert _processes_mentioning(str(tmp_path / "sim")) == []


def test_a_console_that_dies_fails_the_read_and_the_next_one_starts_a_new_console(
        sim, collectors, tmp_path):
    collector = collectors(sim(command_delay_s=0.6), True)
    collector.collect()
    first_pid = collector.runner._session.pid
    killer = threading.Timer(0.3, os.killpg, (first_pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(CollectionError, match="killed by signal 9 during"):
        collector.collect()  # not asked again: it may have done its work
    killer.join()
    assert collector.collect().controllers
    assert collector.runner._session.pid != first_pid
    modes = [inv.mode for inv in read_invocations(tmp_path / "sim")]
    assert modes == ["console", "console"]


def test_a_crashing_cli_is_a_typed_error_and_not_run_again(sim, collectors, tmp_path):
    collector = collectors(sim(crash=["ctrl all show config detail"]), False)
    with pytest.raises(CollectionError, match="console exited 134") as caught:
        collector.collect()  # in a console
    assert isinstance(caught.value.__cause__, ConsoleDied)
    with pytest.raises(CliFailed, match="exited 134"):
        collector.runner.run(["ctrl", "all", "show", "config", "detail"])  # one-shot
    assert [inv.mode for inv in read_invocations(tmp_path / "sim")] == ["console", "argv"]


@pytest.mark.parametrize("console", MODES)
def test_garbage_output_is_a_collection_error(sim, collectors, console):
    collector = collectors(sim(garbage=["ctrl all show config detail"]), console)
    with pytest.raises(CollectionError, match="not Smart Array CLI output"):
        collector.collect()


@pytest.mark.parametrize("console", MODES)
def test_no_controllers_is_typed_and_hints_at_sg(sim, collectors, console):
    collector = collectors(sim(no_controllers=True), console)
    with pytest.raises(CollectionError, match="modprobe sg") as caught:
        collector.collect()
    assert caught.value.__cause__.kind == "no_controllers"


@pytest.mark.parametrize("console", MODES)
def test_a_foreign_instance_holding_the_vendor_lock_is_retried_then_typed(sim, collectors,
                                                                         console):
    collector = collectors(sim(lock_conflict=True), console, wait_s=1.0)
    with pytest.raises(CollectionError, match="Another instance") as caught:
        collector.collect()  # the conflict lasts for good: it ends, retried then typed
    assert isinstance(caught.value.__cause__, VendorCommandError)
    assert caught.value.__cause__.kind == "lock_conflict"


def test_the_runner_retries_while_another_instance_runs(sim, tmp_path):
    cli = sim()
    lock = HostLock(tmp_path / "cli.lock", wait_s=15)
    # an instance started behind our lock's back, like an administrator's own ssacli; it holds
    # the simulator's single-instance lock until the runner has met the conflict once
    foreign = subprocess.Popen([*cli.argv, "ctrl", "all", "show"], stdout=subprocess.DEVNULL,
                               env={**os.environ, "SMARTARRAY_SIM_FAULTS": '{"hang": ["*"]}'})
    state = tmp_path / "sim"

    def foreign_holds() -> bool:
        return any(inv.pid == foreign.pid and inv.commands for inv in read_invocations(state))

    def end_foreign_after_a_conflict() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
            inv.pid != foreign.pid and inv.exit_code == 1 for inv in read_invocations(state)
        ):
            time.sleep(0.02)
        foreign.terminate()

    deadline = time.monotonic() + 30
    while not foreign_holds():
        assert time.monotonic() < deadline, "the foreign instance did not start"
        time.sleep(0.02)
    releaser = threading.Thread(target=end_foreign_after_a_conflict)
    releaser.start()
    runner = VendorRunner(cli, lock, timeout_s=10, console=False)
    try:
        output = runner.run(["ctrl", "all", "show", "config", "detail"])
    finally:
        runner.close()
        releaser.join()
        foreign.wait(10)
    assert "in Slot" in output
    ours = [inv for inv in read_invocations(state) if inv.pid != foreign.pid]
    assert len(ours) >= 2  # the first try met the conflict


LOOP = """
import sys
from pathlib import Path
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from tests import detaching_cli
argv, lock, console = sys.argv[1].split("\\x1f"), Path(sys.argv[2]), sys.argv[3] == "1"
runner = VendorRunner(VendorCli(tuple(argv), "simulator"), HostLock(lock, 30), timeout_s=20,
                      console=console)
for _ in range(4):
    assert read_snapshot(runner).controllers
runner.close()
"""


def test_two_processes_never_run_the_cli_at_once(sim, tmp_path):
    cli = sim(command_delay_s=0.1)
    procs = [
        subprocess.Popen([sys.executable, "-c", LOOP, "\x1f".join(cli.argv),
                          str(tmp_path / "cli.lock"), console])
        for console in ("1", "0", "1")
    ]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    invocations = read_invocations(tmp_path / "sim")
    assert len(invocations) >= 6
    assert overlaps(invocations) == []


def test_lock_timeout_names_the_holder_and_a_dead_holder_frees_it(tmp_path):
    path = tmp_path / "cli.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from smartarray_agent.collectors.ssacli.lock import HostLock\n"
        f"HostLock({str(path)!r}, 1).acquire(); print('held', flush=True); time.sleep(60)"
    )], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(LockTimeout, match=f"held by pid {holder.pid}"):
        HostLock(path, 0.3).acquire()
    holder.kill()
    holder.wait()
    lock = HostLock(path, 2)
    lock.acquire()
    assert lock.holder().pid == os.getpid()
    lock.release()


def test_an_idle_console_lets_go_of_the_lock_for_a_waiter(sim, collectors, tmp_path):
    collector = collectors(sim(), True)
    collector.collect()
    assert collector.runner.lock.held  # the console session keeps it between collections
    waiter = HostLock(tmp_path / "cli.lock", wait_s=30)
    waiter.acquire()  # LockTimeout if the idle console kept it (no collection comes to end it)
    assert not collector.runner.lock.held and collector.runner._session is None
    waiter.release()
    assert collector.collect().controllers  # takes the lock and a new session again


STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild too
child = subprocess.Popen(["sleep", "60"])
print(child.pid, flush=True)
time.sleep(60)
"""


def test_the_killer_ends_a_whole_group_and_kills_what_ignores_term():
    leader = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    grandchild = int(leader.stdout.readline())
    started = time.monotonic()
    end_groups([leader.pid])
    took = time.monotonic() - started
    assert leader.wait(5) == -signal.SIGKILL  # left to its parent to reap
    assert not Path(f"/proc/{grandchild}").exists() or \
        Path(f"/proc/{grandchild}/stat").read_text().split(") ")[1][0] == "Z"
    assert took >= GRACE_S  # TERM first, KILL after the grace


@pytest.mark.parametrize("console", MODES)
def test_a_good_output_is_cleaned_and_scanned_once(sim, collectors, console, monkeypatch):
    from smartarray_agent.collectors.ssacli import parser

    cleaned: list[int] = []
    real_clean = parser.clean
    monkeypatch.setattr(parser, "clean", lambda text: cleaned.append(len(text)) or
                        real_clean(text))
    collector = collectors(sim("two-controllers"), console)
    collector.collect()  # the first also reads the CLI's version
    cleaned.clear()
    assert len(collector.collect().controllers) == 2
    assert len(cleaned) == 1  # by the parse; the runner's look for "Error:" did not clean it


def test_the_open_console_says_it_locks_other_cli_users_out(sim, collectors, caplog):
    collector = collectors(sim(), True)
    with caplog.at_level("WARNING", logger="smartarray_agent.collectors.ssacli.runner"):
        collector.collect()
        collector.collect()
    said = [r.getMessage() for r in caplog.records if "every other user" in r.getMessage()]
    assert len(said) == 1  # once, at the first session


def test_a_timeout_is_not_held_by_a_grandchild_that_left_with_the_output(tmp_path):
    """The CLI hangs after starting a grandchild in a session of its own that keeps its
    standard output open: the run ends at its timeout all the same (it used to wait for the
    end of file for ever after ending the CLI's group), and the grandchild is ended too
    (issue #39, finding 6)."""
    program, pid_file = detaching_cli.write(tmp_path, hang=True)
    with detaching_cli.cleaned_up(pid_file):
        with pytest.raises(CliTimeout):  # it ends: the output held open does not hold it
            VendorCli((str(program),), "ssacli").run(["ctrl", "all", "show"], timeout_s=2)
        assert not detaching_cli.alive(pid_file), "the grandchild outlived the run"


def test_a_run_that_ends_is_not_held_by_a_grandchild_that_left_with_the_output(tmp_path):
    """The CLI answers and exits, its grandchild holds the output open: the run returns the
    answer when the CLI exits (not at its timeout, as a timeout), and ends the grandchild."""
    program, pid_file = detaching_cli.write(tmp_path, hang=False)
    with detaching_cli.cleaned_up(pid_file):
        result = VendorCli((str(program),), "ssacli").run(["version"], timeout_s=30)
        assert (result.returncode, result.output) == (0, "the answer\n")  # not a CliTimeout
        assert not detaching_cli.alive(pid_file), "the grandchild outlived the run"


def _own_children() -> list[subprocess.Popen]:
    """Children of this process that no vendor call started: in its session, and in one of
    their own with their output elsewhere, as a detached grandchild of the CLI is."""
    return [subprocess.Popen(["sleep", "300"]),
            subprocess.Popen(["sleep", "300"], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]


@pytest.mark.parametrize("console", MODES)
def test_a_fully_detached_grandchild_is_ended_with_the_call_and_nothing_else(tmp_path,
                                                                            console):
    """The CLI leaves a grandchild in a session of its own with its output sent to /dev/null,
    which nothing of the call holds: it is ended at the end of the call (issue #50 item 7),
    while this process's other children, made before the call and while the CLI runs, are
    not."""
    program, pid_file = detaching_cli.write(
        tmp_path, detached=True, then=list(vendor_argv("gen9-battery", tmp_path / "sim")))
    cli = VendorCli((str(program),), "ssacli")
    own = _own_children()
    try:
        with detaching_cli.cleaned_up(pid_file):
            if console:
                session = cli.console(timeout_s=30)
                own += _own_children()  # while the console runs
                assert "P440ar" in session.run("ctrl all show status")
                assert detaching_cli.alive(pid_file)  # the call is not over
                session.close()
            else:
                result = cli.run(["ctrl", "all", "show", "status"], timeout_s=30,
                                 started=lambda pid: own.extend(_own_children()))
                assert "P440ar" in result.output
            assert not detaching_cli.alive(pid_file), "the grandchild outlived the call"
            assert [child.poll() for child in own] == [None] * len(own)
    finally:
        for child in own:
            child.kill()
            child.wait()
