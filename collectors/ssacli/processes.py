"""Start the vendor CLI, and end it and whatever it left behind (docs/agent.md, "What the
vendor CLI leaves behind").

:func:`start` runs the CLI from argv (never a shell) in a session of its own, with ``LC_ALL=C``
and ``INFOMGR_BYPASS_NONSA=1``, under the seccomp filter (common/confine.py) and with a mark
in its environment that names the call; the agent is the subreaper of what it starts
(``PR_SET_CHILD_SUBREAPER``), so a descendant whose parent ends stays the agent's. At the end
of the call :func:`finish` ends the CLI's group and the agent's descendants in the CLI's
session or carrying the call's mark (a ``setsid`` grandchild with its output elsewhere still
does), and nothing else; it reaps the CLI last, so that its pid, and with it its session's
id, cannot name another process meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.common.confine import confine_root

GRACE_S = 1.0
POLL_S = 0.02
MARK = "SMARTARRAY_AGENT_CALL"  # the environment variable that names a vendor call
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


@dataclass(frozen=True)
class Call:
    """A vendor CLI process, and the mark its descendants inherit."""

    process: subprocess.Popen[bytes]
    mark: str


def start(argv: Sequence[str], **popen: Any) -> Call:
    """Start the CLI (``popen``: its standard streams); SsacliError when it cannot run."""
    confine_root()  # the CLI inherits the filter
    _become_subreaper()
    mark = f"{os.getpid()}-{uuid.uuid4().hex}"
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "INFOMGR_BYPASS_NONSA": "1", MARK: mark}
    try:
        process = subprocess.Popen(list(argv), env=env, start_new_session=True, **popen)
    except OSError as error:
        raise SsacliError(f"could not run {argv[0]}: {error}") from None
    return Call(process, mark)


def exited(call: Call) -> bool:
    """Whether the CLI has ended, without reaping it (see :func:`finish`)."""
    with contextlib.suppress(ChildProcessError):
        found = os.waitid(os.P_PID, call.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return found is not None
    return True  # reaped already


def finish(call: Call) -> None:
    """End the CLI's process group and what the call left (the module's doc says which
    processes those are), then reap the CLI. Returns once none of them runs."""
    if not exited(call):  # a timeout, an interrupt: its group first
        end_groups([call.process.pid])
    left = leftovers(call)  # its group's members too: a group lies within its session
    end_groups([entry.pid for entry in left if entry.state != "Z"])
    for entry in left:  # adopted by this process as their parents ended: reaped here
        if entry.ppid == os.getpid():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(entry.pid, os.WNOHANG)
    with contextlib.suppress(subprocess.TimeoutExpired):
        call.process.wait(GRACE_S)  # a CLI stuck in the kernel past KILL is left to subprocess


def leftovers(call: Call) -> list[ProcStat]:
    """The descendants of this process that ``call`` left: its CLI's session's members and
    the processes that carry its mark (the CLI itself aside). Sound only while the CLI is
    not reaped."""
    children: dict[int, list[ProcStat]] = {}
    for entry in processes():
        children.setdefault(entry.ppid, []).append(entry)
    below = list(children.get(os.getpid(), []))
    for entry in below:  # grows as it goes: every descendant, once
        below += children.get(entry.pid, [])
    return [entry for entry in below if entry.pid != call.process.pid
            and (entry.session == call.process.pid or _carries(entry.pid, call.mark))]


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
    parent to reap (subprocess keeps its exit status)."""
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
    if not targets:
        return False
    groups = {pid for pid, group in targets if group}
    alone = {pid for pid, group in targets if not group}
    return any(
        entry.state != "Z" and (entry.pgrp in groups or entry.pid in alone)
        for entry in processes()
    )


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
