"""Parse throughput over the real captures: prints lines/s and MB/s.

    python benchmarks/parse_throughput.py [--captures ../shared/captures/real] [--rounds 20]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from smartarray_agent.collectors.ssacli.parser import ParseError, parse

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "captures" / "real"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--captures", type=Path, default=DEFAULT)
    options.add_argument("--rounds", type=int, default=20)
    args = options.parse_args()
    texts = [p.read_text(errors="replace") for p in sorted(args.captures.glob("*.txt"))]
    if not texts:
        raise SystemExit(f"no captures in {args.captures}")
    lines = sum(t.count("\n") + 1 for t in texts)
    size = sum(len(t.encode()) for t in texts)
    started = time.perf_counter()
    for _ in range(args.rounds):
        for text in texts:
            with contextlib.suppress(ParseError):
                parse(text)
    elapsed = time.perf_counter() - started
    total_lines = lines * args.rounds
    print(f"{len(texts)} captures, {lines} lines, {size} bytes, {args.rounds} rounds")
    print(f"{elapsed:.2f} s: {total_lines / elapsed:,.0f} lines/s, "
          f"{size * args.rounds / elapsed / 1e6:.2f} MB/s")


if __name__ == "__main__":
    main()
