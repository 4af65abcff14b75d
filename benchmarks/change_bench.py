"""What a change costs (issue #40): vendor CLI starts, counted from the simulator's invocation
log, and wall time of ``set-cache-ratio`` (no question), ``write-cache enable --what
no-battery`` through its question, ``set-cache-ratio --all`` on ``large`` and ``status``, on
the simulator with its start delayed like a real CLI's (``startup_delay_s``). Each run on a
fresh simulated host (its own state directory, lock and audit file).

    python benchmarks/change_bench.py [--runs 5] [--startup-delay 2] [--python PYTHON]

Targets: a change that asks nothing at most 2 starts and 6 s; one that asks at most 3 starts;
``--all`` on ``large`` at most 2 starts; ``status`` 1 start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect
from child import run_measured
from spread import machine, spread


@dataclass(frozen=True)
class Case:
    name: str
    scenario: str
    arguments: list[str]
    answer: bool = False  # answer the question "y" on a terminal
    max_starts: int = 1
    max_wall_s: float | None = None


CASES = [
    Case("set-cache-ratio (no question)", "gen9-battery",
         ["set-cache-ratio", "25/75", "--slot", "0"], max_starts=2, max_wall_s=6),
    Case("write-cache enable --what no-battery (asks)", "gen9-battery",
         ["write-cache", "enable", "--what", "no-battery", "--slot", "0"], answer=True,
         max_starts=3),
    Case("set-cache-ratio --all on large", "large", ["set-cache-ratio", "25/75", "--all"],
         max_starts=2),
    Case("status", "gen9-battery", ["status"], max_starts=1),
]


def run_once(case: Case, python: str, delay_s: float) -> tuple[int, float]:
    """One run on a fresh host: the CLI starts and the wall time, in seconds."""
    with tempfile.TemporaryDirectory(prefix="change-bench-") as scratch:
        home = Path(scratch)
        env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(home / "sim"),
                   SMARTARRAY_SIM_FAULTS=json.dumps({"startup_delay_s": delay_s}))
        argv = [python, "-m", "smartarray_agent", *case.arguments, "--simulate",
                case.scenario, "--lock-file", str(home / "cli.lock")]
        if case.arguments[0] != "status":
            argv += ["--audit-file", str(home / "audit.jsonl")]
        if case.answer:
            started = time.perf_counter()
            child = pexpect.spawn(argv[0], argv[1:], env=env, encoding="utf-8", timeout=120)
            child.expect(r"Continue\? \[y/N\]")
            child.sendline("y")
            child.expect(pexpect.EOF)
            wall = time.perf_counter() - started
            child.close()
            if child.exitstatus != 0:
                raise SystemExit(f"{case.name}: exited {child.exitstatus}: {child.before}")
        else:
            wall = run_measured(argv, env=env, failure=f"{case.name} failed").wall_s
        log = (home / "sim" / "invocations.jsonl").read_text(encoding="utf-8").splitlines()
        return sum(json.loads(line)["event"] == "start" for line in log), wall  # CLI starts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--startup-delay", type=float, default=2.0,
                        help="the simulated CLI's start-up, seconds")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose installed agent is measured")
    args = parser.parse_args()
    print(machine())
    print(f"simulator start-up delay {args.startup_delay:g} s, {args.runs} runs each")
    for case in CASES:
        figures = [run_once(case, args.python, args.startup_delay) for _ in range(args.runs)]
        starts = sorted({count for count, _ in figures})
        walls = [wall for _, wall in figures]
        target = f"at most {case.max_starts} start{'s' if case.max_starts > 1 else ''}"
        if case.max_wall_s is not None:
            target += f" and {case.max_wall_s:g} s"
        met = (max(starts) <= case.max_starts
               and (case.max_wall_s is None or max(walls) <= case.max_wall_s))
        print(f"{case.name}: CLI starts {'/'.join(map(str, starts))}; wall "
              f"{spread(walls, 's')}; target {target}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
