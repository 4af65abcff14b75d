"""What ``smartarray-agent status --input FILE --json`` costs at and beyond its size cap:
wall time and peak RSS (min, median, max of ``--runs`` runs) for a real capture repeated up
to just under the 4 MiB cap (parsed), 62.7 MB of it as a file and on standard input (both
refused).

    python benchmarks/input_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smartarray_agent.cli.inputs import MAX_BYTES

CAPTURE = (Path(__file__).resolve().parents[1].parent / "shared" / "captures" / "real"
           / "hpacucli-ctrl-all-show-config-detail-P410i-P800-1.txt")


def run(path: Path, stdin: bool) -> tuple[int, float, float]:
    """Exit code, seconds and peak RSS (MiB) of one ``status --input``."""
    started = time.perf_counter()
    with path.open("rb") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "smartarray_agent", "status", "--json", "--input",
             "-" if stdin else str(path)],
            stdin=handle if stdin else subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, time.perf_counter() - started, usage.ru_maxrss / 1024


def repeat(path: Path, size: int) -> Path:
    """The capture repeated up to ``size`` bytes, written piecewise: a big buffer in this
    process would show in the peak RSS of the children it forks."""
    text = CAPTURE.read_bytes()
    with path.open("wb") as handle:
        for _ in range(size // len(text)):
            handle.write(text)
    return path


def spread(values: list[float]) -> str:
    return f"min {min(values):.2f}, median {statistics.median(values):.2f}, max {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        at_cap = repeat(Path(tmp) / "at-cap.txt", MAX_BYTES)
        huge = repeat(Path(tmp) / "huge.txt", 62_700_000)
        for name, path, stdin in (("at the cap, file", at_cap, False),
                                  ("62.7 MB, file", huge, False),
                                  ("62.7 MB, standard input", huge, True)):
            results = [run(path, stdin) for _ in range(args.runs)]
            codes = sorted({code for code, _, _ in results})
            print(f"{name} ({path.stat().st_size / 2**20:.1f} MiB), exit {codes}: "
                  f"wall s {spread([r[1] for r in results])}; "
                  f"peak RSS MiB {spread([r[2] for r in results])}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} runs each")


if __name__ == "__main__":
    main()
