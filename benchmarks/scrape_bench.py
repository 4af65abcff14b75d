"""The agent under load, against the simulator's ``large`` scenario (8 controllers, 24 drives
each). Prints:

1. scrape latency (p50, p99, max) of 50 scrapers, each on its own keep-alive connection,
   against ``smartarray-agent run`` while every simulated CLI command takes 3 s (so a
   collection is nearly always running). Two loads, measured in the same run of the agent:
   paced (each scraper every 100 ms, 500 scrapes/s in all) and burst (all 50 connected
   first, then their 50 requests written back to back, 40 times); each with gzip, as
   Prometheus scrapes, and in plain text; each load ``--runs`` times, its figures given as
   min / median / max. The scrapers are scrape_client.py, a one-thread epoll process of
   its own: each scrape is timed from its request written to its answer's last byte, and
   the client's own CPU per scrape is printed;
2. the gzip burst p99 of a fresh agent collecting back to back against a fresh agent that
   collects once an hour (so not during the load), one load each, interleaved: what a
   collection adds to a burst, and the floor this machine allows;
3. RSS of the collection loop after 10, 100, 500 and 1,000 collections (default
   configuration). The CPU a collection costs is benchmarks/cost_bench.py's.

    python benchmarks/scrape_bench.py [--runs 3] [--seconds 15] [--collections 1000]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from scrape_client import Load, measure
from spread import machine, spread

SCRAPERS = 50
PACE_S = 0.1
BURSTS = 40
_LISTENING = re.compile(r"listening on http://([^/]+)/")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def start_agent(directory: Path, interval_s: float = 1) -> tuple[subprocess.Popen, str]:
    """The agent on ``large``, every CLI command 3 s: with the default ``interval_s`` it
    collects back to back; with an hour, only once, before it is ready."""
    config = directory / "agent.toml"
    config.write_text(f"""
[ssacli]
simulate = "large"
lock_file = "{directory}/cli.lock"
timeout_s = 60
[collect]
interval_s = {interval_s}
""")
    env = {**os.environ, "SMARTARRAY_SIM_FAULTS": '{"command_delay_s": 3}',
           "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim")}
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "run", "--config", str(config),
         "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE, text=True, env=env,
    )
    assert process.stderr is not None
    host = None
    for line in process.stderr:
        match = _LISTENING.search(line)
        if match:
            host = match.group(1)
        if host and "collector ssacli" in line:
            break  # the first collection is done (3 s and more): data to serve
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the pipe drained
    assert host, "the agent did not start"
    return process, host


def report(name: str, runs: list[Load]) -> None:
    """The spread of the runs for each figure, and what the client cost."""
    print(f"  {name}: {len(runs[0].latencies_ms)} scrapes a run")
    for label, figure in (("p50", lambda r: percentile(r, 50)),
                          ("p99", lambda r: percentile(r, 99)), ("max", max)):
        print(f"    {label}: {spread([figure(run.latencies_ms) for run in runs], 'ms')}")
    print(f"    client CPU per scrape: {spread([run.client_cpu_us for run in runs], 'us', 0)}")
    if any(run.skipped for run in runs):
        print(f"    skipped, the previous answer still coming: {[run.skipped for run in runs]}")
    if runs[0].send_spread_ms:
        print(f"    {SCRAPERS} requests written within (median of a run's bursts): "
              + spread([statistics.median(run.send_spread_ms) for run in runs], "ms", 3))
        print(f"    queue, 1st to {SCRAPERS}th answer complete (p99 of a run's bursts): "
              + spread([percentile(run.queue_ms, 99) for run in runs], "ms"))
        print("    the client's lateness waking up before a burst (max of a run's): "
              + spread([max(run.oversleep_ms) for run in runs], "ms"))


def loads(host: str, runs: int, seconds: float) -> None:
    """Paced and burst, gzip and plain, each ``runs`` times, interleaved."""
    for gzipped, encoding in ((True, "gzip, as Prometheus"), (False, "plain text")):
        results: dict[str, list[Load]] = {"paced": [], "burst": []}
        for _ in range(runs):
            results["paced"].append(measure(host, "paced", gzipped, "--seconds", str(seconds),
                                            "--pace", str(PACE_S)))
            results["burst"].append(measure(host, "burst", gzipped, "--rounds", str(BURSTS),
                                            "--pause", str(PACE_S)))
        report(f"{encoding}, paced (each scraper every {PACE_S * 1000:.0f} ms)",
               results["paced"])
        report(f"{encoding}, burst (all {SCRAPERS} at once, {BURSTS} times)", results["burst"])


def floor(directory: Path, runs: int) -> None:
    """Gzip bursts against the agent collecting and against the same agent with no
    collection during the load, a fresh agent for each load, interleaved: what the
    collection adds, and what this machine allows."""
    p99: dict[str, list[float]] = {"collecting back to back": [], "not collecting": []}
    for run in range(runs):
        for name, interval_s in (("collecting back to back", 1), ("not collecting", 3600)):
            agent_dir = directory / f"floor-{run}-{interval_s}"
            agent_dir.mkdir()
            process, host = start_agent(agent_dir, interval_s)
            try:
                load = measure(host, "burst", True, "--rounds", str(BURSTS),
                               "--pause", str(PACE_S))
            finally:
                process.terminate()
                process.wait(10)
            p99[name].append(percentile(load.latencies_ms, 99))
    for name, values in p99.items():
        print(f"  {name}: p99 {spread(values, 'ms')}; runs over 5 ms: "
              f"{sum(v > 5 for v in values)} of {len(values)}")


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def collections(directory: Path, count: int) -> None:
    os.environ["SMARTARRAY_SIM_STATE_DIR"] = str(directory / "sim-loop")
    from smartarray_agent.config import Config, SsacliConfig
    from smartarray_agent.daemon.agent import metric_settings
    from smartarray_agent.daemon.loop import CollectionLoop
    from smartarray_agent.daemon.notify import Notifier
    from smartarray_agent.exporter.view import MetricsView
    from smartarray_agent.sources import build_collectors

    config = Config(ssacli=SsacliConfig(simulate="large", lock_file=directory / "loop.lock"))
    view = MetricsView(metric_settings(config))
    loop = CollectionLoop(build_collectors(config), view, Notifier(None),
                          interval_s=0, debounce_s=1)
    marks = sorted({m for m in (10, 100, 500, count) if m <= count})
    loop.start()
    for mark in marks:
        while loop.rounds < mark:
            time.sleep(0.005)
        view.body()
        print(f"  after {loop.rounds:5d} collections: RSS {rss_kib() / 1024:.1f} MiB")
    loop.stop()
    loop.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each load")
    parser.add_argument("--seconds", type=float, default=15, help="paced load duration")
    parser.add_argument("--collections", type=int, default=1000)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        print(f"scrape latency, {SCRAPERS} concurrent scrapers, large scenario, "
              "3 s per simulated CLI command:")
        process, host = start_agent(directory)
        try:
            loads(host, args.runs, args.seconds)
        finally:
            process.terminate()
            process.wait(10)
        print(f"gzip burst p99, a fresh agent for each load: collecting, or not "
              f"(interval 1 h), interleaved, {args.runs} runs each:")
        floor(directory, args.runs)
        print(f"collection loop, large scenario, {args.collections} collections:")
        collections(directory, args.collections)


if __name__ == "__main__":
    main()
