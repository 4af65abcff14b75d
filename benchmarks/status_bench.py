"""``smartarray-agent status --input CAPTURE --json`` against the named stack's floor,
floor_status.py (a typer command that reads the same file into a pydantic model and prints
it): wall and CPU time of each, run alternately ``--runs`` times in fresh processes, as
min / median / max, and the ratio of the medians (#26 target: CPU at most 1.3 times the
floor's).

    python benchmarks/status_bench.py [--runs 20] [--capture FILE] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from child import run_measured
from spread import machine, spread

HERE = Path(__file__).resolve().parent
DEFAULT_CAPTURE = (HERE.parent.parent / "shared" / "captures" / "real" /
                   "ssacli-ctrl-all-show-config-detail-P408i-a-1.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--capture", type=Path, default=DEFAULT_CAPTURE)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose installed agent is measured")
    args = parser.parse_args()
    commands = {
        "agent": [args.python, "-m", "smartarray_agent", "status", "--input",
                  str(args.capture), "--json"],
        "floor": [args.python, str(HERE / "floor_status.py"), str(args.capture)],
    }
    for argv in commands.values():  # warm the page cache and the bytecode caches
        run_measured(argv)
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            measured = run_measured(argv)
            wall[name].append(measured.wall_s * 1000)
            cpu[name].append(measured.cpu_s * 1000)
    print(machine())
    print(f"capture: {args.capture.name}")
    for name in commands:
        print(f"{name}: wall {spread(wall[name], 'ms', 1)}; CPU {spread(cpu[name], 'ms', 1)}")
    ratio = statistics.median(cpu["agent"]) / statistics.median(cpu["floor"])
    wall_ratio = statistics.median(wall["agent"]) / statistics.median(wall["floor"])
    print(f"agent / floor, medians: CPU {ratio:.2f}x, wall {wall_ratio:.2f}x (target: CPU "
          f"at most 1.3x)")
    # a run's minimum is its cost with the least interference from other work on the host
    print(f"agent / floor, minimums: CPU {min(cpu['agent']) / min(cpu['floor']):.2f}x")


if __name__ == "__main__":
    main()
