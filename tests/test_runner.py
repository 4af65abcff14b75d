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
SHOW = ["ctrl", "all", "show", "config", "detail"]


@pytest.fixture
def sim(tmp_path, monkeypatch):
    """A simulated CLI with its own state directory; faults as keyword arguments; without a
    console (it refuses to start one), for ``console`` False: then every command is
    one-shot."""

    def make(scenario: str = "gen9-battery", *, console: bool = True, **faults) -> VendorCli:
        faults |= {} if console else {"console_refused": True}
        if faults:
            monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps(faults))
        return VendorCli(tuple(vendor_argv(scenario, state_dir=tmp_path / "sim")), "simulator")

    return make


@pytest.fixture
def runners(tmp_path):
    def make(cli: VendorCli, timeout_s: float = 15, wait_s: float = 15) -> VendorRunner:
        return VendorRunner(cli, HostLock(tmp_path / "cli.lock", wait_s), timeout_s=timeout_s)

    return make


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


def _runs(state_dir: Path) -> list[tuple[str, list[str]]]:
    """(mode, commands) of each simulator process that ran a command."""
    return [(inv.mode, inv.commands) for inv in read_invocations(state_dir) if inv.commands]


@pytest.mark.parametrize("console", MODES)
def test_collects_the_scenario(sim, runners, console):
    snapshot = read_snapshot(runners(sim("two-controllers", console=console)))
    assert len(snapshot.controllers) == 2
    assert all(c.cache.status is not None for c in snapshot.controllers)


def test_each_collection_is_one_console_whose_banner_tells_the_version(sim, runners, tmp_path):
    runner = runners(sim("two-controllers"))
    by_console = [read_snapshot(runner) for _ in range(3)]
    assert by_console[0].cli_version == "3.10.3.0"  # the console's banner says it
    assert [(inv.mode, len(inv.commands)) for inv in read_invocations(tmp_path / "sim")] == [
        ("console", 1)] * 3  # opened for each collection, closed at its end
    by_one_shot = [read_snapshot(runners(sim("two-controllers", console=False)))
                   for _ in range(2)]  # its `version` command says it
    assert by_console[1:] == by_one_shot


@pytest.mark.parametrize("console", MODES)
def test_a_hung_cli_is_killed_at_the_timeout_and_leaves_no_process(sim, runners, console,
                                                                   tmp_path):
    runner = runners(sim(hang=[" ".join(SHOW)], console=console), timeout_s=1)
    with pytest.raises(CollectionError, match="did not finish in 1 s") as caught:
        read_snapshot(runner)
    assert isinstance(caught.value.__cause__, CliTimeout)
    assert _processes_mentioning(str(tmp_path / "sim")) == []


def test_a_console_that_dies_fails_its_command_and_the_next_one_starts_a_new_console(
        sim, runners, tmp_path):
    runner = runners(sim(command_delay_s=0.6))
    with runner.session():
        runner.run(["ctrl", "all", "show", "status"])
        first_pid = runner._console.pid
        killer = threading.Timer(0.3, os.killpg, (first_pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(ConsoleDied, match="killed by signal 9 during"):
            runner.run(SHOW)  # not asked again: it may have done its work
        killer.join()
        assert "in Slot" in runner.run(SHOW)
        assert runner._console.pid != first_pid
    assert [mode for mode, _ in _runs(tmp_path / "sim")] == ["console", "console"]


@pytest.mark.parametrize("console", MODES)
def test_a_crashing_cli_is_a_typed_error_and_not_run_again(sim, runners, console, tmp_path):
    runner = runners(sim(crash=[" ".join(SHOW)], console=console))
    with pytest.raises(CollectionError, match="exited 134") as caught:
        read_snapshot(runner)
    assert isinstance(caught.value.__cause__, ConsoleDied if console else CliFailed)
    assert _runs(tmp_path / "sim") == [("console" if console else "argv", [" ".join(SHOW)])]


@pytest.mark.parametrize("console", MODES)
def test_garbage_output_is_a_collection_error(sim, runners, console):
    runner = runners(sim(garbage=[" ".join(SHOW)], console=console))
    with pytest.raises(CollectionError, match="not Smart Array CLI output"):
        read_snapshot(runner)


@pytest.mark.parametrize("console", MODES)
def test_no_controllers_is_typed_and_hints_at_sg(sim, runners, console):
    with pytest.raises(CollectionError, match="modprobe sg") as caught:
        read_snapshot(runners(sim(no_controllers=True, console=console)))
    assert caught.value.__cause__.kind == "no_controllers"


@pytest.mark.parametrize("console", MODES)
def test_a_foreign_instance_holding_the_vendor_lock_is_retried_then_typed(sim, runners,
                                                                         console):
    runner = runners(sim(lock_conflict=True, console=console), wait_s=1.0)
    with pytest.raises(CollectionError, match="Another instance") as caught:
        read_snapshot(runner)  # the conflict lasts for good: it ends, retried then typed
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
    try:
        output = VendorRunner(cli, lock, timeout_s=10).run(SHOW)
    finally:
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
argv, lock = sys.argv[1].split("\\x1f"), Path(sys.argv[2])
runner = VendorRunner(VendorCli(tuple(argv), "simulator"), HostLock(lock, 30), timeout_s=20)
for _ in range(4):
    assert read_snapshot(runner).controllers
"""


def test_two_processes_never_run_the_cli_at_once(sim, tmp_path):
    cli = sim()
    procs = [  # consoles and one-shot runs
        subprocess.Popen([sys.executable, "-c", LOOP, "\x1f".join(cli.argv),
                          str(tmp_path / "cli.lock")],
                         env={**os.environ, "SMARTARRAY_SIM_FAULTS": json.dumps(
                             {"command_delay_s": 0.1, "console_refused": refused})})
        for refused in (False, True, False)
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
def test_a_good_output_is_cleaned_and_scanned_once(sim, runners, console, monkeypatch):
    from smartarray_agent.collectors.ssacli import parser

    cleaned: list[int] = []
    real_clean = parser.clean
    monkeypatch.setattr(parser, "clean", lambda text: cleaned.append(len(text)) or
                        real_clean(text))
    runner = runners(sim("two-controllers", console=console))
    read_snapshot(runner)  # the first also reads the CLI's version
    cleaned.clear()
    assert len(read_snapshot(runner).controllers) == 2
    assert len(cleaned) == 1  # by the parse; the runner's look for "Error:" did not clean it


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


# A CLI that says which descriptors it has (the one listing them aside), then answers.
DESCRIPTORS = """\
import os, sys
fds = [int(n) for n in os.listdir("/proc/self/fd")]
print("descriptors", sorted(fd for fd in fds if os.path.exists(f"/proc/self/fd/{fd}")))
if not sys.argv[1:]:
    print("=> ", end="", flush=True)
    sys.stdin.readline()
"""


@pytest.mark.parametrize("console", MODES)
def test_the_cli_inherits_only_its_standard_streams(tmp_path, console):
    """What this process inherited from its parent (here a pipe made inheritable, as a shell
    leaves them) is not passed on to the vendor CLI, as subprocess's close_fds kept it."""
    program = tmp_path / "ssacli"
    program.write_text(DESCRIPTORS)
    cli = VendorCli((sys.executable, str(program)), "ssacli")
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    try:
        if console:
            session = cli.console(timeout_s=30)
            printed = session.banner
            session.close()
        else:
            printed = cli.run(["version"], timeout_s=30).output
    finally:
        os.close(read_end)
        os.close(write_end)
    assert printed.strip() == "descriptors [0, 1, 2]"
