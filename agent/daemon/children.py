"""End this process's child processes (the vendor CLI or its console) with their process
groups: the last resort of a stop that cannot wait for a hung collection."""

from __future__ import annotations

import os

from smartarray_agent.collectors.ssacli.processes import end_groups


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


def end_children() -> int:
    """End each child with its process group (TERM, then KILL after the one grace period of
    :mod:`~smartarray_agent.collectors.ssacli.processes`). Returns how many there were."""
    pids = child_pids()
    end_groups(pids)
    return len(pids)
