"""Start the vendor CLI, and end it and what it left behind (docs/agent.md, "What the vendor
CLI leaves behind").

:func:`start` spawns the CLI from argv (``os.posix_spawnp``: never a shell, no fork of this
process, which has threads) as a session leader, with ``LC_ALL=C``, ``INFOMGR_BYPASS_NONSA=1``,
the seccomp filter (common/confine.py) and a mark in its environment that names the call; the
agent is the subreaper of what it starts, so a descendant whose parent ends stays its own.
:func:`finish` ends the CLI's group and the agent's descendants in the CLI's session or
carrying the mark (a ``setsid`` grandchild with its output elsewhere still does), nothing
else, and reaps the CLI last, so that its pid and session id name no other process meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.common.confine import confine_root

GRACE_S = 1.0
POLL_S = 0.02
MARK = "SMARTARRAY_AGENT_CALL"  # the environment variable that names a vendor call
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


@dataclass
class Call:
    """A vendor CLI process, and the mark its descendants inherit."""

    pid: int
    mark: str
    returncode: int | None = None  # once reaped: its exit code, or minus the signal's


_unreaped: set[int] = set()  # ended by finish, to reap: some outlive KILL in the kernel


def terminal_streams(terminal: int) -> list[tuple]:
    """The file actions that make the pty ``terminal`` a program's standard streams, opened
    by name after ``setsid``, so that it is the program's controlling terminal too."""
    return [(os.POSIX_SPAWN_OPEN, 0, os.ttyname(terminal), os.O_RDWR, 0),
            (os.POSIX_SPAWN_DUP2, 0, 1), (os.POSIX_SPAWN_DUP2, 0, 2)]


def start(argv: Sequence[str], streams: list[tuple]) -> Call:
    """Start the CLI; ``streams`` are the ``os.posix_spawn`` file actions that give it its
    standard streams. They run after ``setsid``: a terminal they open becomes the CLI's
    controlling terminal. SsacliError when it cannot run."""
    confine_root()  # the CLI inherits the filter
    _become_subreaper()
    mark = f"{os.getpid()}-{uuid.uuid4().hex}"
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "INFOMGR_BYPASS_NONSA": "1", MARK: mark}
    try:  # the signals Python ignores back to their defaults, as subprocess does
        pid = os.posix_spawnp(argv[0], list(argv), env, file_actions=[*streams, *_inherited()],
                              setsid=True, setsigmask=(),
                              setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as error:
        raise SsacliError(f"could not run {argv[0]}: {error}") from None
    return Call(pid, mark)


def _inherited() -> list[tuple[int, int]]:
    """Close actions for the descriptors past the standard streams that the CLI would
    inherit, as subprocess's ``close_fds``: what this process inherited (Python opens every
    descriptor close-on-exec)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own, closed since
            if int(name) > 2 and os.get_inheritable(int(name)):
                found.append((os.POSIX_SPAWN_CLOSE, int(name)))
    return found


def exited(call: Call) -> bool:
    """Whether the CLI has ended, without reaping it (see :func:`finish`)."""
    with contextlib.suppress(ChildProcessError):
        return os.waitid(os.P_PID, call.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    return True  # reaped already


def finish(call: Call) -> None:
    """End the CLI's process group and what the call left, then reap the CLI."""
    if not exited(call):  # a timeout, an interrupt: its group first
        end_groups([call.pid])
    left = leftovers(call)  # its group's members too: a group lies within its session
    end_groups([entry.pid for entry in left if entry.state != "Z"])
    # Reaped here: the CLI, what this process adopted as their parents ended, and what was
    # stuck in the kernel past KILL at an earlier call (one still stuck is left for later).
    _unreaped.update([call.pid, *(entry.pid for entry in left if entry.ppid == os.getpid())])
    for pid in list(_unreaped):
        with contextlib.suppress(ChildProcessError):
            reaped, status = os.waitpid(pid, os.WNOHANG)
            if not reaped:
                continue
            if pid == call.pid:
                call.returncode = os.waitstatus_to_exitcode(status)
        _unreaped.discard(pid)


def leftovers(call: Call) -> list[ProcStat]:
    """This process's descendants in the CLI's session or carrying the call's mark, the CLI
    aside; sound while the CLI is not reaped."""
    children: dict[int, list[ProcStat]] = {}
    for entry in processes():
        children.setdefault(entry.ppid, []).append(entry)
    below = list(children.get(os.getpid(), []))
    for entry in below:  # grows as it goes: every descendant, once
        below += children.get(entry.pid, [])
    return [entry for entry in below if entry.pid != call.pid
            and (entry.session == call.pid or _carries(entry.pid, call.mark))]


def _carries(pid: int, mark: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return f"{MARK}={mark}".encode() in environ.read().split(b"\0")
    except OSError:  # ended, or not ours to read
        return False


@functools.cache
def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:  # Linux 3.4 and later
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def end_groups(pids: Sequence[int]) -> None:
    """TERM each pid's process group (the process alone when it leads none), KILL what is
    left after :data:`GRACE_S`. Returns once none of them runs; a zombie is left for its
    parent to reap (:func:`finish` takes the CLI's exit status)."""
    targets = {-pid if _leads_group(pid) else pid for pid in pids}  # as kill(2) takes them
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for target in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, sig)
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


def _running(targets: set[int]) -> bool:
    """Whether a target (a group, as minus its id, or a lone pid) has a member that is not a
    zombie waiting to be reaped."""
    return bool(targets) and any(entry.state != "Z" and {-entry.pgrp, entry.pid} & targets
                                 for entry in processes())


@dataclass(frozen=True)
class ProcStat:
    pid: int
    state: str  # "R", "S", "Z" (a zombie), ...
    ppid: int
    pgrp: int
    session: int
    started: int  # clock ticks since boot: with the pid, names one process (pids are reused)


def process(pid: int) -> ProcStat | None:
    """Process ``pid`` from ``/proc/PID/stat``; None when there is no such process."""
    # "pid (comm) state ppid pgrp session ... starttime (22nd)": comm may hold spaces and
    # parentheses.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return ProcStat(pid, fields[0], *map(int, (fields[1], fields[2], fields[3], fields[19])))
    except (OSError, IndexError, ValueError):
        return None


def processes() -> Iterator[ProcStat]:
    """Every process of the host."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (found := process(int(entry.name))) is not None:
            yield found
