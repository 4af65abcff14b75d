"""What a collection of the simulator's ``large`` scenario (8 controllers, 24 drives each)
costs the agent, against its floor: the agent's own CPU per collection (``run`` collecting
back to back, from /proc, the simulated CLI's processes not counted) next to parsing the
same output and rendering its families with prometheus_client's ``generate_latest`` alone,
in one process (min / median / max of ``--runs``); and the agent's RSS after 10, 50 and
``--collections`` collections (#26 targets: at most 1.5 times the floor's CPU; under 80 MiB
and flat).

    python benchmarks/collect_bench.py [--collections 100] [--runs 20]
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

from prometheus_client import CollectorRegistry, generate_latest
from scrape_bench import cli_starts, start_agent
from spread import machine, spread

from smartarray_agent.collectors.ssacli import metrics
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.simulator import vendor_argv

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


class Families:
    def __init__(self, snapshot: object) -> None:
        self.snapshot = snapshot

    def collect(self):  # noqa: ANN201 (prometheus_client's custom collector protocol)
        return metrics.families(self.snapshot, 80.0)  # type: ignore[arg-type]


def floor_ms(output: str, runs: int) -> list[float]:
    """CPU ms of parse + generate_latest of ``output``, ``runs`` times."""
    found = []
    for _ in range(runs):
        started = time.process_time()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(Families(parse(output)))
        generate_latest(registry)
        found.append((time.process_time() - started) * 1000)
    return found


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime


def rss_mib(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=100)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        output = subprocess.run([*vendor_argv("large", directory / "floor"), "ctrl", "all",
                                 "show", "config", "detail"], capture_output=True, text=True,
                                check=True).stdout
        floor = floor_ms(output, args.runs)
        (process,), _ = start_agent(args.python, directory, 1, "run")
        per_round: list[float] = []
        rss: dict[int, float] = {}
        try:
            rounds, cpu = cli_starts(directory), cpu_s(process.pid)
            first_round, first_cpu = rounds, cpu
            while rounds < args.collections:
                now = cli_starts(directory)
                if now > rounds:
                    spent = cpu_s(process.pid)
                    per_round.append((spent - cpu) * 1000 / (now - rounds))
                    rounds, cpu = now, spent
                    for mark in (10, 50, args.collections):
                        if rounds >= mark and mark not in rss:
                            rss[mark] = rss_mib(process.pid)
                time.sleep(0.2)  # sampling /proc: the agent's rounds are what is measured
        finally:
            process.terminate()
            process.wait(30)
    print(f"floor, parse + generate_latest: CPU {spread(floor, 'ms', 1)}")
    print(f"agent, per collection: CPU {spread(per_round, 'ms', 1, of='samples')}")
    print(f"agent / floor, medians: {statistics.median(per_round) / statistics.median(floor):.2f}x "
          "(target: at most 1.5x)")
    # /proc counts CPU in clock ticks, so one sample is coarse; the mean over every round
    # is not
    mean_ms = (cpu - first_cpu) * 1000 / (rounds - first_round)
    print(f"agent, mean over {rounds - first_round} collections: CPU {mean_ms:.1f} ms, "
          f"{mean_ms / statistics.median(floor):.2f}x the floor's median")
    print("agent RSS after " + ", ".join(f"{mark} collections {value:.1f} MiB"
                                         for mark, value in sorted(rss.items()))
          + " (target: under 80 MiB and flat)")


if __name__ == "__main__":
    main()
