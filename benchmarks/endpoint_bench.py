"""The HTTP endpoint alone, on the ``large`` scenario's exposition (8 controllers, 192 drives):
bursts of 50 scrapes written at the same instant (scrape_client.py, a process of its own),
against an ExporterServer in a child process that does nothing else. Prints, per run, the
latency (p50, p99, max), the queue (first to last answer of a burst), the endpoint's CPU
per scrape (user and system, from the child's own clock: a figure a busy machine disturbs
far less than latency), the client's CPU and how late it woke, then min/median/max over
the runs.

    python benchmarks/endpoint_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from scrape_bench import BURSTS, PACE_S, SCRAPERS, percentile
from scrape_client import Load, measure
from spread import machine, spread

_CHILD = """
import os, sys
from smartarray_agent.cli.agent import SWITCH_INTERVAL_S
from smartarray_agent.exporter.http import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity
plain = open(sys.argv[1], "rb").read()
zipped = open(sys.argv[2], "rb").read()
sys.setswitchinterval(SWITCH_INTERVAL_S)  # as run sets it
server = ExporterServer(("127.0.0.1", 0), lambda c: zipped if c else plain, WebSecurity())
server.start()
print(server.server_address[1], flush=True)
before = os.times()
sys.stdin.read()
after = os.times()
print(after.user - before.user, after.system - before.system, flush=True)
server.stop()
"""


def exposition(directory: Path) -> tuple[Path, Path]:
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim")}
    plain = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "metrics", "--once", "--simulate", "large"],
        capture_output=True, env=env, timeout=300).stdout
    assert b'controller="7"' in plain
    (directory / "large.prom").write_bytes(plain)
    (directory / "large.prom.gz").write_bytes(gzip.compress(plain, 6, mtime=0))
    return directory / "large.prom", directory / "large.prom.gz"


def one_run(plain: Path, zipped: Path, gzipped: bool) -> tuple[Load, float, float]:
    """What the client measured in BURSTS bursts, and the endpoint's CPU (µs) per scrape,
    user and system apart."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(plain), str(zipped)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    port = int(child.stdout.readline())
    load = measure(f"127.0.0.1:{port}", "burst", gzipped, "--rounds", str(BURSTS),
                   "--pause", str(PACE_S))
    child.stdin.close()
    user_s, system_s = (float(x) for x in child.stdout.readline().split())
    child.wait(10)
    scrapes = len(load.latencies_ms)
    return load, user_s / scrapes * 1e6, system_s / scrapes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        plain, zipped = exposition(Path(tmp))
        print(f"endpoint alone, {SCRAPERS} scrapes at once x {BURSTS} bursts, large scenario "
              f"({plain.stat().st_size} bytes plain, {zipped.stat().st_size} gzip):")
        for gzipped, name in ((True, "gzip, as Prometheus"), (False, "plain text")):
            p99s, queues, cpus, clients = [], [], [], []
            for run in range(args.runs):
                load, user_us, system_us = one_run(plain, zipped, gzipped)
                latencies = load.latencies_ms
                p99s.append(percentile(latencies, 99))
                queues.append(percentile(load.queue_ms, 99))
                cpus.append(user_us + system_us)
                clients.append(load.client_cpu_us)
                print(f"  {name}, run {run + 1}: p50 {percentile(latencies, 50):.2f} ms, "
                      f"p99 {p99s[-1]:.2f} ms, max {max(latencies):.2f} ms, queue p99 "
                      f"{queues[-1]:.2f} ms, endpoint CPU {user_us:.0f} user + "
                      f"{system_us:.0f} system us/scrape, client CPU "
                      f"{load.client_cpu_us:.0f} us/scrape, client woke up to "
                      f"{max(load.oversleep_ms):.2f} ms late")
            print(f"  {name}: p99 {spread(p99s, 'ms')}")
            print(f"    queue, 1st to {SCRAPERS}th answer (p99 of bursts) {spread(queues, 'ms')}")
            print(f"    endpoint CPU per scrape {spread(cpus, 'us', 0)}")
            print(f"    client CPU per scrape {spread(clients, 'us', 0)}")


if __name__ == "__main__":
    main()
