"""What a collection and a command cost the agent, against the simulator. Prints, as the
spread (min / median / max) of several runs:

1. the agent's own CPU per collection of the ``large`` scenario (8 controllers, 24 drives
   each) through the daemon's loop with its default configuration, next to the CPU of
   parsing that same output and rendering its exposition (text and gzip) alone, and their
   ratio (#13 target: at most 1.3); and the CPU of writing that exposition's text with
   the agent's writer next to prometheus_client's ``generate_latest``, from the same
   metric families;
2. the wall time and the CPU time of ``smartarray-agent status --input FILE --json`` (the
   command an operator runs: the script installed beside the interpreter, whose first line
   names it) next to a bare ``python -c pass`` of the same interpreter, and their ratios
   (#13 target: at most 5); on a busy machine the CPU ratio is the steadier one;
3. what the environment installs (every distribution's files: the agent and what it pulls
   in).

``--baseline PYTHON`` measures 2 and 3 for another environment too (the interpreter of a
virtual environment with an earlier version installed), interleaved with this one, so
that a change is measured before and after in one run. The simulated CLI's own CPU is not
the agent's and is not counted.

    python benchmarks/cost_bench.py [--runs 5] [--collections 20] [--starts 10]
                                    [--baseline /path/to/venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from child import run_measured
from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest
from spread import machine, spread

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.simulator import vendor_argv
from smartarray_agent.collectors.ssacli.collector import CONFIG_DETAIL
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.run import run_once
from smartarray_agent.config import Config, SsacliConfig, SysfsConfig
from smartarray_agent.daemon.agent import metric_settings
from smartarray_agent.daemon.loop import CollectionLoop
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import MetricSettings, families
from smartarray_agent.exporter.textformat import exposition
from smartarray_agent.exporter.view import MetricsView
from smartarray_agent.sources import build_collectors


def cpu_s() -> float:
    """This process's own CPU (its threads; not its children, the simulated CLI)."""
    times = os.times()
    return times.user + times.system


def loop_cpu_per_collection(directory: Path, collections: int) -> float:
    config = Config(ssacli=SsacliConfig(simulate="large", lock_file=directory / "cli.lock"))
    view = MetricsView(metric_settings(config))
    loop = CollectionLoop(build_collectors(config), view, Notifier(None),
                          interval_s=0, debounce_s=1)
    loop.start()
    while loop.rounds < 1:  # the first round also reads the CLI's version: not counted
        time.sleep(0.005)
    start_rounds, start_cpu = loop.rounds, cpu_s()
    while loop.rounds < start_rounds + collections:
        time.sleep(0.005)
    used, rounds = cpu_s() - start_cpu, loop.rounds - start_rounds
    loop.stop()
    loop.join(30)
    return used / rounds


def parse_render_cpu(text: str, collections: int) -> float:
    view = MetricsView(metric_settings(Config()))
    collector = build_collectors(Config(sysfs=SysfsConfig(enabled=False)))[0]  # renders only
    started = cpu_s()
    for _ in range(collections):
        snapshot = parse(text)
        view.publish([(collector, CollectorResult("ssacli", True, 0.1, time.time(), snapshot))])
    return (cpu_s() - started) / collections


class _Families:
    """What generate_latest reads: something with ``collect()``."""

    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = metrics

    def collect(self) -> list[Metric]:
        return self.metrics


def writers_cpu(text: str, repeats: int) -> tuple[float, float]:
    """CPU of one exposition's text: the agent's writer, then generate_latest."""
    collector = build_collectors(Config(sysfs=SysfsConfig(enabled=False)))[0]
    result = CollectorResult("ssacli", True, 0.1, time.time(), parse(text))
    metrics = families([(collector, result)], now=time.time(), settings=MetricSettings(None))
    spent = []
    for write in (lambda: exposition(metrics), lambda: generate_latest(_Families(metrics))):
        started = cpu_s()
        for _ in range(repeats):
            write()
        spent.append((cpu_s() - started) / repeats)
    return spent[0], spent[1]


# Run by each measured interpreter, so that it counts its own environment.
INSTALLED_SIZE = """
import importlib.metadata, json, pathlib
total = files = 0
for dist in importlib.metadata.distributions():
    for file in dist.files or ():
        path = pathlib.Path(str(dist.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
            files += 1
print(json.dumps([total, files]))
"""


def start_up(pythons: dict[str, str], capture: Path, starts: int) -> None:
    """Part 2: each interpreter's ``status --input FILE --json`` and bare start, interleaved
    so that a busy moment hits every one."""
    commands = {}
    for label, python in pythons.items():
        script = str(Path(python).parent / "smartarray-agent")
        commands[label, "status"] = [script, "status", "--input", str(capture), "--json"]
        commands[label, "bare"] = [python, "-c", "pass"]
    costs: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in commands}
    for _ in range(starts):
        for key, argv in commands.items():
            measured = run_measured(argv)
            costs[key].append((measured.wall_s, measured.cpu_s))
    print(f"2. start-up, {starts} runs each:")
    for label in pythons:
        print(f"   {label}:")
        for index, what in ((0, "wall"), (1, "CPU")):
            command = [cost[index] * 1000 for cost in costs[label, "status"]]
            baseline = [cost[index] * 1000 for cost in costs[label, "bare"]]
            ratio = statistics.median(command) / statistics.median(baseline)
            print(f"     {what}: status --input FILE --json {spread(command, 'ms', 0)}; "
                  f"python -c pass {spread(baseline, 'ms', 0)}; ratio of medians {ratio:.1f}")


def installed_sizes(pythons: dict[str, str]) -> None:
    """Part 3: bytes and files of every distribution installed in each environment."""
    print("3. installed (the agent and what it pulls in):")
    for label, python in pythons.items():
        answer = subprocess.run([python, "-c", INSTALLED_SIZE], check=True,
                                capture_output=True, text=True).stdout
        size, files = json.loads(answer)
        print(f"   {label}: {size / 2**20:.1f} MiB in {files} files")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=5)
    options.add_argument("--collections", type=int, default=20, help="per run")
    options.add_argument("--starts", type=int, default=10, help="command runs of each kind")
    options.add_argument("--baseline", metavar="PYTHON",
                         help="also measure start-up and size with this interpreter")
    args = options.parse_args()
    pythons = {f"this environment ({sys.executable})": sys.executable}
    if args.baseline:
        pythons[f"baseline ({args.baseline})"] = args.baseline
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        os.environ["SMARTARRAY_SIM_STATE_DIR"] = str(directory / "sim")
        cli = VendorCli(tuple(vendor_argv("large")), "simulator")
        text = run_once(cli, CONFIG_DETAIL).output
        print(f"1. CPU per collection, large scenario ({len(text.splitlines())} lines), "
              f"{args.runs} runs of {args.collections} collections:")
        loop, alone = [], []
        for _ in range(args.runs):
            loop.append(loop_cpu_per_collection(directory, args.collections) * 1000)
            alone.append(parse_render_cpu(text, args.collections) * 1000)
        ratios = [a / b for a, b in zip(loop, alone, strict=True)]
        print(f"   agent, daemon loop:    {spread(loop, 'ms', 1)}")
        print(f"   parse + render alone:  {spread(alone, 'ms', 1)}")
        print(f"   ratio (run by run):    {spread(ratios)}")
        ours, library = zip(*(writers_cpu(text, args.collections) for _ in range(args.runs)),
                            strict=True)
        print("   writing its text from the same families, CPU per exposition:")
        print(f"     the agent's writer:  {spread([t * 1000 for t in ours], 'ms', 1)}")
        print(f"     generate_latest:     {spread([t * 1000 for t in library], 'ms', 1)}")

        small = directory / "gen9.txt"
        small.write_text(run_once(VendorCli(tuple(vendor_argv("gen9-battery")), "simulator"),
                                  CONFIG_DETAIL).output)
        start_up(pythons, small, args.starts)
    installed_sizes(pythons)


if __name__ == "__main__":
    main()
