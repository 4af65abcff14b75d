"""End this process's child processes (the vendor CLI or its console) with their process
groups: the last resort of a stop that cannot wait for a hung collection."""

from __future__ import annotations

import os

from smartarray_agent.collectors.ssacli.processes import end_groups, processes


def child_pids(parent: int | None = None) -> list[int]:
    parent = os.getpid() if parent is None else parent
    return [entry.pid for entry in processes() if entry.ppid == parent]


def end_children() -> int:
    """End each child with its process group (TERM, then KILL after the one grace period of
    :mod:`~smartarray_agent.collectors.ssacli.processes`). Returns how many there were."""
    pids = child_pids()
    end_groups(pids)
    return len(pids)
