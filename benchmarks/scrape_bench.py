"""The agent under load, against the simulator's ``large`` scenario (8 controllers, 24 drives
each). Prints:

1. scrape latency (p50, p99, max) of 50 concurrent scrapers, each on its own keep-alive
   connection, against ``smartarray-agent run`` while every simulated CLI command takes 3 s
   (so a collection is nearly always running). Two loads, measured in the same run of the
   agent: paced (each scraper every 100 ms, 500 scrapes/s in all) and burst (the 50
   scrapers fire at the same instant, 40 times); each with gzip, as Prometheus scrapes, and
   in plain text; each load ``--runs`` times, its figures given as min / median / max;
2. RSS of the collection loop after 10, 100, 500 and 1,000 collections (default
   configuration). The CPU a collection costs is benchmarks/cost_bench.py's.

    python benchmarks/scrape_bench.py [--runs 3] [--seconds 15] [--collections 1000]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import os
import re
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from spread import machine, spread

SCRAPERS = 50
PACE_S = 0.1
BURSTS = 40
_LISTENING = re.compile(r"listening on http://([^/]+)/")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def start_agent(directory: Path) -> tuple[subprocess.Popen, str]:
    config = directory / "agent.toml"
    config.write_text(f"""
[ssacli]
simulate = "large"
lock_file = "{directory}/cli.lock"
timeout_s = 60
[collect]
interval_s = 1
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


def scrape(conn: http.client.HTTPConnection, gzipped: bool, check: bool = False) -> float:
    """The time from request to the whole body received; with ``gzipped`` asked as
    Prometheus asks (Accept-Encoding: gzip). The content is checked only when ``check``:
    the scrapers share one Python process here, and their own work is not the agent's."""
    started = time.perf_counter()
    conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"} if gzipped else {})
    response = conn.getresponse()
    body = response.read()
    took = time.perf_counter() - started
    assert response.status == 200
    if check:
        assert b'controller="7"' in (gzip.decompress(body) if gzipped else body)
    return took


def paced(host: str, seconds: float, gzipped: bool) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def scraper(offset: float) -> None:
        conn = http.client.HTTPConnection(host, timeout=30)
        scrape(conn, gzipped, check=True)
        next_at = time.monotonic() + offset
        while next_at < stop_at:
            time.sleep(max(0.0, next_at - time.monotonic()))
            took = scrape(conn, gzipped)
            with lock:
                latencies.append(took)
            next_at += PACE_S
        conn.close()

    threads = [threading.Thread(target=scraper, args=(i * PACE_S / SCRAPERS,))
               for i in range(SCRAPERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def burst(host: str, gzipped: bool) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(SCRAPERS)

    def scraper() -> None:
        conn = http.client.HTTPConnection(host, timeout=30)
        scrape(conn, gzipped, check=True)  # connect first: bursts time scrapes, not TCP
        for _ in range(BURSTS):
            barrier.wait(timeout=60)
            took = scrape(conn, gzipped)
            with lock:
                latencies.append(took)
        conn.close()

    threads = [threading.Thread(target=scraper) for _ in range(SCRAPERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def report(name: str, runs: list[list[float]]) -> None:
    """One line per figure, each the spread of the runs."""
    ms = [[t * 1000 for t in run] for run in runs]
    print(f"  {name}: {len(ms[0])} scrapes a run")
    for label, figure in (("p50", lambda r: percentile(r, 50)),
                          ("p99", lambda r: percentile(r, 99)), ("max", max)):
        print(f"    {label}: {spread([figure(run) for run in ms], 'ms')}")


def burst_at_once(host: str, gzipped: bool) -> list[float]:
    """The burst again, written by one thread: the 50 requests go out in one loop on 50
    keep-alive connections and each answer is timed when its last byte is in (selectors),
    so the figure is the agent's queue, not 50 Python client threads queueing for this
    process's GIL. Latency: from the first request written to the answer complete."""
    address, port = host.rsplit(":", 1)
    conns = [socket.create_connection((address, int(port)), timeout=30)
             for _ in range(SCRAPERS)]
    request = ("GET /metrics HTTP/1.1\r\nHost: bench\r\n"
               + ("Accept-Encoding: gzip\r\n" if gzipped else "") + "\r\n").encode()
    latencies: list[float] = []
    with selectors.DefaultSelector() as selector:
        for _ in range(BURSTS):
            received = {conn: bytearray() for conn in conns}
            started = time.perf_counter()
            for conn in conns:
                conn.sendall(request)
                selector.register(conn, selectors.EVENT_READ)
            while received:
                for key, _ in selector.select(30):
                    conn = key.fileobj
                    data = received[conn]
                    data += conn.recv(1 << 20)
                    head_end = data.find(b"\r\n\r\n")
                    length = re.search(rb"Content-Length: (\d+)", data[:head_end])
                    if head_end >= 0 and length and len(data) >= head_end + 4 + int(length[1]):
                        latencies.append(time.perf_counter() - started)
                        assert data.startswith(b"HTTP/1.1 200 ")
                        selector.unregister(conn)
                        del received[conn]
            time.sleep(PACE_S)
    for conn in conns:
        conn.close()
    return latencies


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def collections(directory: Path, count: int) -> None:
    os.environ["SMARTARRAY_SIM_STATE_DIR"] = str(directory / "sim-loop")
    from smartarray_agent.config import Config
    from smartarray_agent.daemon.agent import metric_settings
    from smartarray_agent.daemon.loop import CollectionLoop
    from smartarray_agent.daemon.notify import Notifier
    from smartarray_agent.exporter.view import MetricsView
    from smartarray_agent.sources import build_collectors

    config = Config.model_validate(
        {"ssacli": {"simulate": "large", "lock_file": str(directory / "loop.lock")}})
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
            for gzipped, encoding in ((True, "gzip, as Prometheus"), (False, "plain text")):
                report(f"{encoding}, paced (each every {PACE_S * 1000:.0f} ms)",
                       [paced(host, args.seconds, gzipped) for _ in range(args.runs)])
                report(f"{encoding}, burst (all {SCRAPERS} at once)",
                       [burst(host, gzipped) for _ in range(args.runs)])
                report(f"{encoding}, burst from one thread (all {SCRAPERS} at once)",
                       [burst_at_once(host, gzipped) for _ in range(args.runs)])
        finally:
            process.terminate()
            process.wait(10)
        print(f"collection loop, large scenario, {args.collections} collections:")
        collections(directory, args.collections)


if __name__ == "__main__":
    main()
