"""What one invocation of the bundled simulator costs: CPU (user + system) and wall time per
process, as the spread (min / median / max) of N runs, next to a bare ``python -c pass`` of
the same interpreter. The tests start the simulator for every collection and change it
stands in for (#15 target: at most 80 ms CPU median for a show and a modify).

Each case runs once first, unmeasured, so the state directory holds the validated scenario
(the first invocation against a new state directory, or after the scenario file changed,
validates the file: measured apart, as "first start").

    python benchmarks/simulator_bench.py [--runs 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from child import run_measured
from spread import machine, spread

SIM = [sys.executable, "-m", "smartarray_agent.collectors.simulator"]


def case(label: str, argvs: list[list[str]], runs: int, warm: bool = True) -> None:
    """Run ``argvs`` in turn ``runs`` times in all; print CPU and wall per invocation."""
    if warm:
        for argv in argvs:
            run_measured(argv)
    cpu, wall = [], []
    for index in range(runs):
        measured = run_measured(argvs[index % len(argvs)])
        cpu.append(measured.cpu_s * 1000)
        wall.append(measured.wall_s * 1000)
    print(f"{label}\n    CPU  {spread(cpu, 'ms', 1)}\n    wall {spread(wall, 'ms', 1)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="invocations per case")
    args = parser.parse_args()
    print(machine())
    print(f"interpreter: {sys.executable}")
    case("python -c pass", [[sys.executable, "-c", "pass"]], args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        def sim(scenario: str, state: str, *words: str) -> list[str]:
            return [*SIM, "--scenario", scenario, "--state-dir", str(Path(tmp) / state), *words]

        show = ("ctrl", "all", "show", "config", "detail")
        case("first start: gen9-battery ctrl all show config detail, new state directory",
             [sim("gen9-battery", f"first-{n}", *show) for n in range(args.runs)],
             args.runs, warm=False)
        case("gen9-battery: ctrl all show config detail", [sim("gen9-battery", "g9", *show)],
             args.runs)
        case("large (8 controllers): ctrl all show config detail", [sim("large", "large", *show)],
             args.runs)
        modify = ("ctrl", "slot=0", "modify")
        case("gen9-battery: ctrl slot=0 modify cacheratio=50/50, then =25/75",
             [sim("gen9-battery", "mod", *modify, "cacheratio=50/50"),
              sim("gen9-battery", "mod", *modify, "cacheratio=25/75")], args.runs)


if __name__ == "__main__":
    main()
