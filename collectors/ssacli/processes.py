"""End processes with their process groups: TERM, then KILL whatever still runs after one
grace period. The one killer of the vendor CLI: a one-shot run at its timeout, a console
session at its close, and the daemon's children at a stop that cannot wait; and what a
one-shot run's CLI left holding its output (:func:`holders`)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

GRACE_S = 1.0
POLL_S = 0.02


def end_groups(pids: Sequence[int]) -> None:
    """TERM each pid's process group (the process alone when it leads none), KILL what is
    left after :data:`GRACE_S`. Returns once none of them runs; a zombie is left for its
    parent to reap (subprocess and pexpect keep their exit status)."""
    targets = [(pid, _leads_group(pid)) for pid in pids]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, group in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                (os.killpg if group else os.kill)(pid, sig)
        deadline = time.monotonic() + GRACE_S
        while _running(targets):
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
        else:
            return


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _running(targets: list[tuple[int, bool]]) -> bool:
    """Whether any target (a whole group, or a lone process) still has a live member: one
    that is not a zombie waiting to be reaped."""
    groups = {pid for pid, group in targets if group}
    alone = {pid for pid, group in targets if not group}
    return any(
        entry.state != "Z" and (entry.pgrp in groups or entry.pid in alone)
        for entry in processes()
    )


def holders(fd: int) -> list[int]:
    """The other processes that have open the pipe whose read end is ``fd``: those that
    inherited a vendor CLI's output, wherever they moved since. None once the pipe hangs up
    (no writer is left): /proc is read only while one is."""
    return [] if _hung_up(fd) else holders_of(os.fstat(fd))


def terminal_holders(master: int) -> list[int]:
    """The other processes that have open the terminal whose master end is ``master`` (a
    console's pty): those that inherited the console's output, wherever they moved since.
    None once the terminal hangs up (no one holds it): /proc is read only while one does."""
    if _hung_up(master):
        return []
    with open(f"/proc/self/fdinfo/{master}") as info:  # Linux says the pty's number there
        number = next(line.split()[1] for line in info if line.startswith("tty-index:"))
    return holders_of(os.stat(f"/dev/pts/{number}"))


def _hung_up(fd: int) -> bool:
    """Whether the other end of ``fd`` (a pipe's read end, a pty's master) is held by no one."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(events & select.POLLHUP for _fd, events in poller.poll(0))


def holders_of(file: os.stat_result) -> list[int]:
    """The other processes with a descriptor of ``file``, matched by device and inode: a
    name such as ``/dev/pts/0`` is another terminal in a container's own devpts."""
    identity = (file.st_dev, file.st_ino)
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            descriptors = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with descriptors:
            if any(_identity(d.path) == identity for d in descriptors):
                found.append(int(entry.name))
    return found


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


@dataclass(frozen=True)
class ProcStat:
    pid: int
    state: str  # "R", "S", "Z" (a zombie), ...
    ppid: int
    pgrp: int
    started: int  # clock ticks since boot: with the pid, names one process (pids are reused)


def process(pid: int) -> ProcStat | None:
    """Process ``pid`` from ``/proc/PID/stat``; None when there is no such process."""
    # "pid (comm) state ppid pgrp ... starttime (22nd)": comm may hold spaces and parentheses.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return ProcStat(pid, fields[0], int(fields[1]), int(fields[2]), int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


def processes() -> Iterator[ProcStat]:
    """Every process of the host."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (found := process(int(entry.name))) is not None:
            yield found
