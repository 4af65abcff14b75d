"""The host lock: waiting says whom it waits for, waiting is fair, and the lock belongs to its
owner (root on a real host): nobody else can take it, block it or make its holder yield."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from smartarray_agent.collectors.ssacli.lock import HostLock, LockRefused, LockTimeout

from .agent_process import AgentInProcess, scenario_file, value
from .invocations import read_invocations
from .test_host_sharing import config

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing owners and users needs root")

HOLD = """
import sys
from smartarray_agent.collectors.ssacli.lock import HostLock
lock = HostLock(sys.argv[1], 5)
lock.acquire()
lock.note("ctrl all show config detail")
print("held", flush=True)
sys.stdin.read()  # hold until the test closes our stdin
"""


@pytest.fixture
def holder(tmp_path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock ``tmp_path/cli.lock`` until its stdin is closed."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "cli.lock")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    yield process
    process.kill()
    process.wait()


def test_a_waiter_says_after_a_second_whom_it_waits_for(tmp_path, holder):
    said: list[tuple[float, str]] = []
    lock = HostLock(tmp_path / "cli.lock", 1.6, notice=lambda m: said.append((time.monotonic(),
                                                                              m)))
    started = time.monotonic()
    with pytest.raises(LockTimeout) as caught:
        lock.acquire()
    assert len(said) == 1
    at, message = said[0]
    assert 0.9 <= at - started < 1.5
    path = tmp_path / "cli.lock"
    assert f"waiting for the host lock {path}, held by pid {holder.pid} (" in message
    assert "ctrl all show config detail, for " in message
    text = str(caught.value)
    assert text.startswith(f"the host lock {tmp_path / 'cli.lock'} is held by pid {holder.pid} (")
    assert "CLI" not in text.split("(")[0]  # it names the lock and its holder, not the CLI


def test_the_record_says_who_holds_the_lock_and_since_when(tmp_path, holder):
    record = json.loads((tmp_path / "cli.lock").read_text())
    assert record["pid"] == holder.pid
    assert record["doing"].endswith(": ctrl all show config detail")
    assert "\n" not in record["doing"]  # the holder's 'python -c' script, on one line
    assert 0 <= time.time() - record["since"] < 60


def test_an_operator_command_says_it_waits_then_runs_when_the_lock_is_free(tmp_path, holder):
    config = tmp_path / "agent.toml"
    config.write_text(f'[ssacli]\nsimulate = "gen9-battery"\nlock_file = "{tmp_path}/cli.lock"\n'
                      "lock_wait_s = 60\n[sysfs]\nenabled = false\n")
    command = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "status", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")},
    )
    assert command.stderr is not None
    line = command.stderr.readline()  # an event: the notice, while the holder still holds
    assert line.startswith(f"smartarray-agent: waiting for the host lock {tmp_path}/cli.lock")
    assert f"held by pid {holder.pid}" in line
    assert holder.stdin is not None
    holder.stdin.close()  # the holder lets go; the command goes on
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert "P440ar" in out


def test_an_operator_runs_before_the_daemons_next_round_when_rounds_are_back_to_back(tmp_path):
    # each collection takes over 1 s, its interval is 1 s: the daemon wants the lock all the time
    scenario = scenario_file(tmp_path, "gen9-battery", {"command_delay_s": 1})
    agent = AgentInProcess(tmp_path, config(tmp_path, scenario, interval_s=1, console=None))
    operator_scenario = tmp_path / "operator.toml"
    operator_scenario.write_text(scenario.read_text().split("\n[faults]")[0])
    operator_config = tmp_path / "operator-agent.toml"
    operator_config.write_text(f'[ssacli]\nsimulate = "{operator_scenario}"\n'
                               f'lock_file = "{tmp_path}/cli.lock"\nlock_wait_s = 20\n'
                               "[sysfs]\nenabled = false\n")
    agent.start()
    try:
        agent.wait_for(lambda s: value(s, "smartarray_collector_success", collector="ssacli") == 1)
        command = subprocess.Popen(
            [sys.executable, "-m", "smartarray_agent", "status", "--config",
             str(operator_config)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=agent.env,
        )
        probe = HostLock(tmp_path / "cli.lock", 0)
        while not probe.others_waiting():  # the event: the operator announced its wait
            assert command.poll() is None, "the operator ran without waiting: retry the test"
            time.sleep(0.01)
        waiting_since = time.monotonic()  # CLOCK_MONOTONIC, as in the simulator's log
        out, err = command.communicate(timeout=60)
        assert command.returncode == 0, err
    finally:
        agent.stop()
    invocations = read_invocations(tmp_path / "sim-state")
    operator = [i for i in invocations if str(operator_scenario) in " ".join(i.argv)]
    assert operator  # its 'ctrl all show config detail', then one 'version', under one hold
    # The daemon's rounds (one console each) that ran on after the operator waited and began
    # before the operator's: the one under way then, and no next one. (A simulator logs its
    # start after its own start-up, which may come after the operator's wait: a start time
    # alone does not tell the round under way from the next.)
    daemon_rounds_after_the_wait = [
        i for i in invocations
        if str(scenario) in " ".join(i.argv)
        and (i.end_monotonic is None or i.end_monotonic > waiting_since)
        and i.start_monotonic < operator[0].start_monotonic
    ]
    assert len(daemon_rounds_after_the_wait) <= 1, daemon_rounds_after_the_wait


# -- the lock belongs to its owner ----------------------------------------------------------


def test_lock_files_are_0600_whatever_the_umask_and_an_old_mode_is_forced(tmp_path):
    (tmp_path / "cli.lock.wait").write_text("")
    (tmp_path / "cli.lock.wait").chmod(0o666)  # left by an older version
    previous = os.umask(0)
    try:
        lock = HostLock(tmp_path / "cli.lock", 1)
        lock.acquire()
        lock.release()
    finally:
        os.umask(previous)
    for name in ("cli.lock", "cli.lock.wait"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_a_planted_link_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "cli.lock").symlink_to(victim)
    with pytest.raises(LockRefused, match="symbolic link"):
        HostLock(tmp_path / "cli.lock", 1).acquire()
    assert victim.read_text() == "precious\n"


def test_a_directory_others_may_write_is_refused(tmp_path):
    directory = tmp_path / "open"
    directory.mkdir()
    directory.chmod(0o777)
    with pytest.raises(LockRefused, match="others may write"):
        HostLock(directory / "cli.lock", 1).acquire()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A root-owned directory others may enter, like /run/smartarray-agent (0755)."""
    directory = Path(tempfile.mkdtemp(prefix="smartarray-lock-"))
    directory.chmod(0o755)
    yield directory
    for entry in directory.iterdir():
        entry.unlink()
    directory.rmdir()


def _as_nobody(attempt: Callable[[], str]) -> str:
    """What ``attempt`` returns when run by an unprivileged user, in a forked child (so no
    file of the venv needs to be readable by that user)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, try, report, leave without running pytest's exit
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = attempt()
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            result = f"raised {type(error).__name__}: {error}"
        os.write(write, result.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        result = pipe.read().decode()
    os.waitpid(pid, 0)
    return result


def _take_shared(*paths: Path) -> str:
    outcomes = []
    for path in paths:
        try:
            fcntl.flock(os.open(path, os.O_RDONLY), fcntl.LOCK_SH | fcntl.LOCK_NB)
            outcomes.append("locked")
        except OSError:
            outcomes.append("refused")
    return " ".join(outcomes)


@needs_root
def test_a_lock_file_of_another_user_is_refused(shared_dir):
    path = shared_dir / "cli.lock"
    path.write_text("")
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(LockRefused, match=f"{path} belongs to uid {NOBODY}"):
        HostLock(path, 1).acquire()


@needs_root
def test_an_unprivileged_user_can_neither_take_the_lock_nor_make_its_holder_yield(shared_dir):
    path = shared_dir / "cli.lock"
    lock = HostLock(path, 5)
    lock.acquire()
    lock.release()  # the files now exist, root's, 0600
    lock.acquire()
    try:
        wait = shared_dir / "cli.lock.wait"
        assert _as_nobody(lambda: _take_shared(path, wait)) == "refused refused"
        assert not lock.others_waiting()
        # nor can it take the lock through HostLock, nor plant a lock of its own there
        taken = _as_nobody(lambda: str(HostLock(path, 0.5).acquire()))
        assert taken.startswith(f"raised LockRefused: the host lock file {path} cannot be opened")
        planted = _as_nobody(lambda: str(HostLock(shared_dir / "other.lock", 0.5).acquire()))
        assert planted.startswith("raised LockRefused")
    finally:
        lock.release()


@needs_root
def test_a_wait_file_another_user_holds_does_not_make_the_holder_yield(shared_dir):
    """In a sticky world-writable directory a user can plant ``<lock>.wait``: it counts for
    nobody, and the lock refuses to announce through it."""
    shared_dir.chmod(0o1777)
    path = shared_dir / "cli.lock"
    lock = HostLock(path, 5)
    lock.acquire()
    wait = shared_dir / "cli.lock.wait"
    wait.unlink()
    wait.write_text("")
    os.chown(wait, NOBODY, NOBODY)
    wait.chmod(0o666)
    fd = os.open(wait, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # the planted waiter
        assert not lock.others_waiting()
        lock.release()
        with pytest.raises(LockRefused, match=f"{wait} belongs to uid {NOBODY}"):
            HostLock(path, 1).acquire()
    finally:
        os.close(fd)
