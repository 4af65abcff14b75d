"""One command run in a child process and measured from its own ``rusage``: what every
benchmark that times a command reads of it. ``wait4`` gives the child's CPU in microseconds
(``os.times`` counts clock ticks of 10 ms, as long as a bare start) and its peak RSS alone
(a figure taken in this process would include what it forked from)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO


@dataclass(frozen=True)
class Measured:
    exit_code: int
    wall_s: float
    cpu_s: float  # user + system
    peak_rss_mib: float


def run_measured(argv: list[str], *, env: Mapping[str, str] | None = None,
                 stdin: IO[bytes] | int = subprocess.DEVNULL, stderr: int | None = None,
                 check: bool = True, failure: str | None = None) -> Measured:
    """Run ``argv`` to its end, its output discarded. With ``check``, a command that does not
    exit 0 ends the benchmark with ``failure`` (default: the command and its exit code)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=stderr)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if check and child.returncode != 0:
        raise SystemExit(failure or f"{' '.join(argv)} exited {child.returncode}")
    return Measured(child.returncode, time.perf_counter() - started,
                    usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
