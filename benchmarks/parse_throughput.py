"""Parse throughput over the real captures: prints lines/s and MB/s per CPU second (the
parser's own CPU, so a busy machine does not lower it) and per wall second, min / median /
max of ``--runs`` runs of ``--rounds`` passes each.

    python benchmarks/parse_throughput.py [--captures ../shared/captures/real] [--rounds 20]
        [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from spread import machine, spread

from smartarray_agent.collectors.ssacli.parser import ParseError, parse

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "captures" / "real"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--captures", type=Path, default=DEFAULT)
    options.add_argument("--rounds", type=int, default=20)
    options.add_argument("--runs", type=int, default=5)
    args = options.parse_args()
    texts = [p.read_text(errors="replace") for p in sorted(args.captures.glob("*.txt"))]
    if not texts:
        raise SystemExit(f"no captures in {args.captures}")
    lines = sum(t.count("\n") + 1 for t in texts)
    size = sum(len(t.encode()) for t in texts)
    print(machine())
    print(f"{len(texts)} captures, {lines} lines, {size} bytes, {args.rounds} rounds a run")
    cpu, wall = [], []
    for _ in range(args.runs):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(args.rounds):
            for text in texts:
                with contextlib.suppress(ParseError):
                    parse(text)
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    for name, seconds in (("CPU", cpu), ("wall", wall)):
        print(f"per {name} second: lines/s "
              f"{spread([lines * args.rounds / s for s in seconds], digits=0)}; "
              f"MB/s {spread([size * args.rounds / s / 1e6 for s in seconds])}")


if __name__ == "__main__":
    main()
