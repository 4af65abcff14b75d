"""The HTTP endpoint alone, on the ``large`` scenario's exposition (8 controllers, 192 drives):
bursts of 50 scrapes written at the same instant (scrape_bench.burst_at_once), against an
ExporterServer in a child process that does nothing else. Prints, per run, the latency
(p50, p99, max) and the endpoint's CPU per scrape (user + system, from the child's own
clock: a figure a busy machine disturbs far less than latency), then min/median/max over
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
import time
from pathlib import Path

from input_bench import spread
from scrape_bench import BURSTS, SCRAPERS, burst_at_once, percentile

_CHILD = """
import os, sys
from smartarray_agent.exporter.http import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity
plain = open(sys.argv[1], "rb").read()
zipped = open(sys.argv[2], "rb").read()
sys.setswitchinterval(0.0005)  # as run sets it
server = ExporterServer(("127.0.0.1", 0), lambda c: zipped if c else plain, WebSecurity())
server.start()
print(server.server_address[1], flush=True)
before = os.times()
sys.stdin.read()
after = os.times()
print(after.user + after.system - before.user - before.system, flush=True)
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


def one_run(plain: Path, zipped: Path, gzipped: bool) -> tuple[list[float], float]:
    """Latencies (ms) of BURSTS bursts and the endpoint's CPU (µs) per scrape."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(plain), str(zipped)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    port = int(child.stdout.readline())
    latencies = [t * 1000 for t in burst_at_once(f"127.0.0.1:{port}", gzipped)]
    child.stdin.close()
    cpu_s = float(child.stdout.readline())
    child.wait(10)
    return latencies, cpu_s / len(latencies) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, zipped = exposition(Path(tmp))
        print(f"endpoint alone, {SCRAPERS} scrapes at once x {BURSTS} bursts, large scenario "
              f"({plain.stat().st_size} bytes plain, {zipped.stat().st_size} gzip):")
        for gzipped, name in ((True, "gzip, as Prometheus"), (False, "plain text")):
            p99s, cpus = [], []
            for run in range(args.runs):
                latencies, cpu_us = one_run(plain, zipped, gzipped)
                p99s.append(percentile(latencies, 99))
                cpus.append(cpu_us)
                print(f"  {name}, run {run + 1}: p50 {percentile(latencies, 50):.2f} ms, "
                      f"p99 {p99s[-1]:.2f} ms, max {max(latencies):.2f} ms, "
                      f"endpoint CPU {cpu_us:.0f} us/scrape")
                time.sleep(0.2)
            print(f"  {name}: p99 ms {spread(p99s)}; CPU us/scrape {spread(cpus)}")
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load[0]:.1f}")


if __name__ == "__main__":
    main()
