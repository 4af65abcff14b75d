"""The simulator's invocation log read back (its writer: simulator/state.py's
``StateStore.log``, which documents the events): every simulator process a test started, with
its commands, and which of them ran at the same time."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Invocation:  # one simulator process, from its start and end events
    id: str
    pid: int
    argv: list[str]
    mode: str
    start_monotonic: float
    start_wall: float
    end_monotonic: float | None = None  # None: still running, or killed by SIGKILL
    end_wall: float | None = None
    exit_code: int | None = None
    commands: list[str] = field(default_factory=list)


def read_invocations(directory: Path) -> list[Invocation]:
    found: dict[str, Invocation] = {}
    path = directory / "invocations.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for record in map(json.loads, lines):
        ident = record["id"]
        if record["event"] == "start":
            found[ident] = Invocation(ident, record["pid"], record["argv"], record["mode"],
                                      record["monotonic"], record["wall"])
        elif record["event"] == "command":
            found[ident].commands.append(record["command"])
        else:
            found[ident].end_monotonic = record["monotonic"]
            found[ident].end_wall = record["wall"]
            found[ident].exit_code = record["exit_code"]
    return sorted(found.values(), key=lambda inv: inv.start_monotonic)


def overlaps(invocations: list[Invocation]) -> list[tuple[Invocation, Invocation]]:
    """Pairs of invocations that ran at the same time (an unfinished one never ends)."""
    pairs = []
    ordered = sorted(invocations, key=lambda inv: inv.start_monotonic)
    for index, first in enumerate(ordered):
        end = first.end_monotonic if first.end_monotonic is not None else float("inf")
        pairs += [(first, later) for later in ordered[index + 1 :] if later.start_monotonic < end]
    return pairs
