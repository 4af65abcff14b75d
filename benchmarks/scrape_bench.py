"""Scrapes while the agent collects the simulator's ``large`` scenario (8 controllers, 24
drives each) back to back: ``--scrapers`` threads, each on its own keep-alive connection,
scrape ``/metrics`` (gzip, as Prometheus does) for ``--seconds``. Prints the latency of
every scrape (p50, p99, max; the #26 target is a p99 under 25 ms), whether every answer was
complete (gzip that decompresses to a page ending in a sample line, ``Content-Length``
honoured), and the vendor CLI processes started: while collecting, and in a second agent
that collects once and is then scraped as hard (#26: no CLI started by a scrape).

Each is measured in the two shapes the agent runs in: ``run`` answering HTTP itself, in
the process that parses, and the packaged units' ``run`` publishing into ``[web]
publish_dir`` for an unprivileged ``serve`` that answers (docs/privileges.md).

    python benchmarks/scrape_bench.py [--scrapers 10] [--seconds 20] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from spread import machine

_LISTENING = re.compile(r"(?:listening|serving \S+) on http://([^/]+)/")
SHAPES = {"run": "run answering", "run+serve": "serve answering, run publishing"}


def start_agent(python: str, directory: Path, interval_s: float,
                shape: str) -> tuple[list[subprocess.Popen], str]:
    """``run`` on ``large`` (and ``serve`` for ``run+serve``); returns once the first
    collection is served, with the processes and the address that answers."""
    config = directory / "agent.toml"
    publish = f'publish_dir = "{directory}"\n' if shape == "run+serve" else ""
    config.write_text(f'[ssacli]\nsimulate = "large"\nlock_file = "{directory}/cli.lock"\n'
                      f"[collect]\ninterval_s = {interval_s}\n[sysfs]\nenabled = false\n"
                      f"[web]\n{publish}")
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim")}
    agent = [python, "-m", "smartarray_agent"]
    run = _started([*agent, "run", "--config", str(config), "--listen", "127.0.0.1:0"], env,
                   "collector ssacli")
    if shape == "run":
        processes, host = [run[0]], run[1]
    else:
        serve = _started([*agent, "serve", "--config", str(config), "--listen", "127.0.0.1:0"],
                         env, "serving")
        processes, host = [run[0], serve[0]], serve[1]
    assert host is not None, "no HTTP address in the log"
    return processes, host


def _started(argv: list[str], env: dict[str, str],
             ready: str) -> tuple[subprocess.Popen, str | None]:
    """The process of ``argv`` once its log has said ``ready``, and the HTTP address it
    named (None for ``run`` publishing)."""
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    host = None
    for line in process.stderr:
        host = host or (match.group(1) if (match := _LISTENING.search(line)) else None)
        if ready in line:
            break
    else:
        raise SystemExit(f"{argv[3]} did not start")
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
    return process, host


def cli_starts(directory: Path) -> int:
    log = directory / "sim" / "invocations.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for line in lines if json.loads(line)["event"] == "start")


# A sample line of the text format: a page cut short ends in a comment or half a line.
SAMPLE = re.compile(rb"[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (-?[0-9.e+-]+|[+-]?Inf|NaN)")


def scrape_for(host: str, scrapers: int, seconds: float) -> tuple[list[float], int]:
    """Latencies in ms of every scrape, and how many answers were not complete."""
    latencies: list[list[float]] = [[] for _ in range(scrapers)]
    bad = [0] * scrapers
    end = time.monotonic() + seconds
    name, port = host.rsplit(":", 1)

    def scraper(index: int) -> None:
        connection = http.client.HTTPConnection(name, int(port), timeout=10)
        while time.monotonic() < end:
            started = time.perf_counter()
            connection.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
            answer = connection.getresponse()
            body = answer.read()
            latencies[index].append((time.perf_counter() - started) * 1000)
            page = gzip.decompress(body) if answer.getheader("Content-Encoding") else body
            if answer.status != 200 or not SAMPLE.fullmatch(page.rstrip().rsplit(b"\n", 1)[-1]):
                bad[index] += 1
        connection.close()

    threads = [threading.Thread(target=scraper, args=(i,)) for i in range(scrapers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [x for scraper_latencies in latencies for x in scraper_latencies], sum(bad)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--shape", choices=[*SHAPES, "both"], default="both",
                        help="who answers the scrapes (default: both, one after the other)")
    args = parser.parse_args()
    print(machine())
    shapes = list(SHAPES) if args.shape == "both" else [args.shape]
    for shape, (interval_s, what) in itertools.product(
            shapes, ((1, "collecting back to back"), (3600, "collected once"))):
        with tempfile.TemporaryDirectory() as folder:
            directory = Path(folder)
            processes, host = start_agent(args.python, directory, interval_s, shape)
            try:
                before = cli_starts(directory)
                latencies, bad = scrape_for(host, args.scrapers, args.seconds)
                started = cli_starts(directory) - before
            finally:
                for process in processes:
                    process.terminate()
                    process.wait(30)
        print(f"{SHAPES[shape]}, {what}: {len(latencies)} scrapes by {args.scrapers} scrapers in "
              f"{args.seconds:g} s, {bad} incomplete; latency p50 "
              f"{percentile(latencies, 50):.2f} / p99 {percentile(latencies, 99):.2f} / max "
              f"{max(latencies):.2f} ms (target p99 < 25 ms); vendor CLI processes started "
              f"meanwhile: {started}")


if __name__ == "__main__":
    main()
