"""What ``smartarray-agent status --input FILE --json`` costs at and beyond its size cap:
wall time and peak RSS (min, median, max of ``--runs`` runs) for a real capture repeated up
to just under the 4 MiB cap (parsed), 62.7 MB of it as a file and on standard input (both
refused).

    python benchmarks/input_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from child import Measured, run_measured
from spread import machine, spread

from smartarray_agent.cli.inputs import MAX_BYTES

CAPTURE = (Path(__file__).resolve().parents[1].parent / "shared" / "captures" / "real"
           / "hpacucli-ctrl-all-show-config-detail-P410i-P800-1.txt")


def run(path: Path, stdin: bool) -> Measured:
    """One ``status --input`` of ``path``, as a file or on standard input."""
    with path.open("rb") as handle:
        return run_measured(
            [sys.executable, "-m", "smartarray_agent", "status", "--json", "--input",
             "-" if stdin else str(path)],
            stdin=handle if stdin else subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            check=False)


def repeat(path: Path, size: int) -> Path:
    """The capture repeated up to ``size`` bytes, written piecewise: a big buffer in this
    process would show in the peak RSS of the children it forks."""
    text = CAPTURE.read_bytes()
    with path.open("wb") as handle:
        for _ in range(size // len(text)):
            handle.write(text)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        at_cap = repeat(Path(tmp) / "at-cap.txt", MAX_BYTES)
        huge = repeat(Path(tmp) / "huge.txt", 62_700_000)
        for name, path, stdin in (("at the cap, file", at_cap, False),
                                  ("62.7 MB, file", huge, False),
                                  ("62.7 MB, standard input", huge, True)):
            results = [run(path, stdin) for _ in range(args.runs)]
            codes = sorted({result.exit_code for result in results})
            print(f"{name} ({path.stat().st_size / 2**20:.1f} MiB), exit {codes}: "
                  f"wall {spread([r.wall_s for r in results], 's')}; "
                  f"peak RSS {spread([r.peak_rss_mib for r in results], 'MiB')}")


if __name__ == "__main__":
    main()
