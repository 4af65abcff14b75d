"""Parse throughput over the real captures: prints lines/s and MB/s, min / median / max of
``--runs`` runs of ``--rounds`` passes each.

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
    elapsed = []
    for _ in range(args.runs):
        started = time.perf_counter()
        for _ in range(args.rounds):
            for text in texts:
                with contextlib.suppress(ParseError):
                    parse(text)
        elapsed.append(time.perf_counter() - started)
    print(f"lines/s: {spread([lines * args.rounds / e for e in elapsed], digits=0)}")
    print(f"MB/s:    {spread([size * args.rounds / e / 1e6 for e in elapsed])}")


if __name__ == "__main__":
    main()
