"""What one ``smartarray-agent simulate ilo --count N`` process costs and serves: its start
time, RSS and file descriptors with N iLOs, and how many whole reads (the agent's own:
login, every GET ``status --ilo`` makes, logout, over a new TLS connection each) it answers
a second, each iLO read once per round by ``--threads`` threads of this process.

    python benchmarks/simulated_ilo.py --count 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from spread import machine, spread

from smartarray_agent.collectors.redfish.crawl import read_ilo
from smartarray_agent.collectors.redfish.settings import RedfishSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--form", default="smartstorage")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="simulated-ilo-") as temp:
        folder = Path(temp)
        env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(folder / "sim")}
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "smartarray_agent", "simulate", "ilo", "gen10", "--port", "0",
             "--count", str(args.count), "--form", args.form, "--dir", str(folder / "ilo")],
            stdout=subprocess.PIPE, text=True, env=env)
        assert process.stdout is not None
        first = process.stdout.readline()
        took = time.monotonic() - started
        process.stdout.readline()  # the certificate's line: all of them are written now
        print(f"{first.strip()}: listening after {took:.1f} s, {_rss(process.pid):.0f} MiB "
              f"RSS, {len(os.listdir(f'/proc/{process.pid}/fd'))} file descriptors")
        try:
            rates, reads = [], []
            for _ in range(args.rounds):
                rate, times = _round(folder / "ilo", args.threads)
                rates.append(rate)
                reads += times
            print(f"whole reads a second, {args.threads} threads: {spread(rates, '', 0)}")
            print(f"one read: {spread(reads, 's', 3, 'reads')}; after them "
                  f"{_rss(process.pid):.0f} MiB RSS")
        finally:
            process.terminate()
            process.wait(30)


def _round(folder: Path, threads: int) -> tuple[float, list[float]]:
    targets = json.loads((folder / "targets.json").read_text())[0]["targets"]

    def read(target: str) -> float:
        settings = RedfishSettings(address=target, ca_file=folder / "ilo.pem",
                                   credentials_file=folder / "ilo-credentials.toml")
        started = time.monotonic()
        assert asyncio.run(read_ilo(settings)).controllers  # a loop of its own per read
        return time.monotonic() - started

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        times = list(pool.map(read, targets))
    return len(targets) / (time.monotonic() - started), times


def _rss(pid: int) -> float:
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


if __name__ == "__main__":
    main()
