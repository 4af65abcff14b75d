"""End this process's child processes (the vendor CLI or its console) with their process
groups: the last resort of a stop that cannot wait for a hung collection."""

from __future__ import annotations

import os
import signal
import time

POLL_S = 0.05


def child_pids(parent: int | None = None) -> list[int]:
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(parent):
            found.append(int(entry.name))
    return found


def end_children(grace_s: float = 1.0) -> int:
    """TERM each child's process group (or the child, when it leads none), KILL what is
    left after ``grace_s``. Returns how many children there were."""
    pids = child_pids()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            _signal(pid, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_running(pid) for pid in pids):
            time.sleep(POLL_S)
        if not any(_running(pid) for pid in pids):
            break
    return len(pids)


def _signal(pid: int, sig: int) -> None:
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _running(pid: int) -> bool:
    """Alive and not yet a zombie waiting for its parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] != "Z"
