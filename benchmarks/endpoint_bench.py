"""The HTTP endpoint alone, on the ``large`` scenario's exposition (8 controllers, 192 drives):
bursts of 50 scrapes written at the same instant (scrape_client.py, a process of its own),
against an ExporterServer in a child process that does nothing else. Prints, per run, the
latency (p50, p99, max), the queue (first to last answer of a burst), the endpoint's CPU
per scrape (user and system, from the child's own clock: a figure a busy machine disturbs
far less than latency), the client's CPU and how late it woke, then min/median/max over
the runs.

Each run is followed by the same load against a bare server: a one-thread epoll loop in a
child process that answers every request head with the same prebuilt bytes (the agent's own
answer, status line and headers included) and does nothing else: no HTTP parsing, limits,
deadlines or auth. What it measures is what this machine and this client allow; the gap
between the two is the endpoint's own.

Then, gzip only, what a burst that meets a collection costs: the same load while the
``large`` output is parsed and rendered over and over (what a collection does with it),
once in a thread of the endpoint's own process, as in ``run`` (the two share the GIL and
the CPUs), once in another process (the CPUs only).

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

# What a collection does with the vendor CLI's output, over and over: argv[1] is the output.
_COLLECTING = """
import sys, threading, time
from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.config import Config, SysfsConfig
from smartarray_agent.daemon.agent import metric_settings
from smartarray_agent.exporter.view import MetricsView
from smartarray_agent.sources import build_collectors
def collect_forever(text):
    config = Config(sysfs=SysfsConfig(enabled=False))
    collector = build_collectors(config)[0]
    view = MetricsView(metric_settings(config))
    while True:
        view.publish([(collector, CollectorResult("ssacli", True, 0.1, time.time(),
                                                  parse(text)))])
if len(sys.argv) == 2:  # a process of its own, not exec'd by the endpoint's
    collect_forever(open(sys.argv[1]).read())
"""

_CHILD = """
import os, sys, threading
from smartarray_agent import turns
from smartarray_agent.exporter.http import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity
plain = open(sys.argv[1], "rb").read()
zipped = open(sys.argv[2], "rb").read()
collecting = len(sys.argv) > 3  # in a thread of this process, as run does
if collecting:
    exec(sys.argv[4])
server = ExporterServer(("127.0.0.1", 0), lambda c: zipped if c else plain, WebSecurity())
turns.tune_interpreter()  # as run does
if collecting:
    threading.Thread(target=collect_forever, args=(open(sys.argv[3]).read(),),
                     daemon=True).start()
server.start()
print(server.server_address[1], flush=True)
before = os.times()
sys.stdin.read()
after = os.times()
print(after.user - before.user, after.system - before.system, flush=True)
server.stop()
"""


# The floor: answers are the agent's (http.py's response()), read from the files the agent
# child serves, so both send the same bytes.
_BARE = """
import os, select, socket, sys
from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.request import response
body = open(sys.argv[2 if sys.argv[3] == "gzip" else 1], "rb").read()
headers = {"Content-Encoding": "gzip"} if sys.argv[3] == "gzip" else {}
answer = response(200, body, CONTENT_TYPE, send_body=True, keep_alive=True, headers=headers)
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(512)
listener.setblocking(False)
poller = select.epoll()
poller.register(listener.fileno(), select.EPOLLIN)
poller.register(sys.stdin.fileno(), select.EPOLLIN)
print(listener.getsockname()[1], flush=True)
clients = {}
scratch = bytearray(65536)
before = os.times()
stop = sys.stdin.fileno()
while stop not in (ready := dict(poller.poll())):
    for fd in ready:
        if fd == listener.fileno():
            sock, _ = listener.accept()
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            clients[sock.fileno()] = sock
            poller.register(sock.fileno(), select.EPOLLIN)
            continue
        sock = clients[fd]
        count = sock.recv_into(scratch)
        if not count:
            poller.unregister(fd)
            clients.pop(fd).close()
        elif scratch.find(b"\\r\\n\\r\\n", 0, count) >= 0:
            sock.sendall(answer)
after = os.times()
print(after.user - before.user, after.system - before.system, flush=True)
"""


def exposition(directory: Path) -> tuple[Path, Path, Path]:
    """The ``large`` scenario's exposition, plain and gzip, and its CLI output."""
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim")}
    plain = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "metrics", "--once", "--simulate", "large"],
        capture_output=True, env=env, timeout=300).stdout
    assert b'controller="7"' in plain
    (directory / "large.prom").write_bytes(plain)
    (directory / "large.prom.gz").write_bytes(gzip.compress(plain, 6, mtime=0))
    output = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "simulate", "run", "large", "--",
         "ctrl", "all", "show", "config", "detail"],
        capture_output=True, env=env, timeout=300, check=True).stdout
    (directory / "large.txt").write_bytes(output)
    return directory / "large.prom", directory / "large.prom.gz", directory / "large.txt"


def one_run(plain: Path, zipped: Path, gzipped: bool, bare: bool = False,
            collecting: Path | None = None, apart: bool = False) -> tuple[Load, float, float]:
    """What the client measured in BURSTS bursts, and the endpoint's CPU (µs) per scrape,
    user and system apart: of the agent's endpoint, or of the bare server. With
    ``collecting`` (CLI output), that output is parsed and rendered over and over meanwhile,
    in the endpoint's process or, ``apart``, in one of its own."""
    script = [_BARE, str(plain), str(zipped), "gzip" if gzipped else "plain"] if bare \
        else [_CHILD, str(plain), str(zipped)]
    if collecting is not None and not apart:
        script += [str(collecting), _COLLECTING]
    other = None
    if collecting is not None and apart:
        other = subprocess.Popen([sys.executable, "-c", _COLLECTING, str(collecting)])
    child = subprocess.Popen([sys.executable, "-c", *script],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdin is not None and child.stdout is not None
        port = int(child.stdout.readline())
        load = measure(f"127.0.0.1:{port}", "burst", gzipped, "--rounds", str(BURSTS),
                       "--pause", str(PACE_S))
        child.stdin.close()
        user_s, system_s = (float(x) for x in child.stdout.readline().split())
        child.wait(10)
    finally:
        if other is not None:
            other.kill()
            other.wait()
    scrapes = len(load.latencies_ms)
    return load, user_s / scrapes * 1e6, system_s / scrapes * 1e6


def collisions(plain: Path, zipped: Path, output: Path, runs: int) -> None:
    """Gzip bursts while the output is parsed and rendered without pause: in the endpoint's
    process, in another, and neither, interleaved run by run."""
    print(f"a burst that meets a collection, gzip: the large output parsed and rendered "
          f"over and over meanwhile ({output.stat().st_size} bytes)")
    where = {"in the endpoint's process (as in run)": (output, False),
             "in another process": (output, True), "nowhere (endpoint alone)": (None, False)}
    figures: dict[str, dict[str, list[float]]] = {
        name: {"p50": [], "p99": []} for name in where}
    for _ in range(runs):
        for name, (collecting, apart) in where.items():
            load = one_run(plain, zipped, True, collecting=collecting, apart=apart)[0]
            figures[name]["p50"].append(percentile(load.latencies_ms, 50))
            figures[name]["p99"].append(percentile(load.latencies_ms, 99))
    for name, kept in figures.items():
        print(f"  collecting {name}: p50 {spread(kept['p50'], 'ms')}, "
              f"p99 {spread(kept['p99'], 'ms')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        plain, zipped, output = exposition(Path(tmp))
        print(f"endpoint alone, {SCRAPERS} scrapes at once x {BURSTS} bursts, large scenario "
              f"({plain.stat().st_size} bytes plain, {zipped.stat().st_size} gzip):")
        for gzipped, name in ((True, "gzip, as Prometheus"), (False, "plain text")):
            figures: dict[str, dict[str, list[float]]] = {
                server: {"p99": [], "queue": [], "cpu": [], "client": []}
                for server in ("endpoint", "bare server")}
            for run in range(args.runs):
                for server, kept in figures.items():
                    load, user_us, system_us = one_run(plain, zipped, gzipped,
                                                       bare=server == "bare server")
                    latencies = load.latencies_ms
                    kept["p99"].append(percentile(latencies, 99))
                    kept["queue"].append(percentile(load.queue_ms, 99))
                    kept["cpu"].append(user_us + system_us)
                    kept["client"].append(load.client_cpu_us)
                    print(f"  {name}, run {run + 1}, {server}: p50 "
                          f"{percentile(latencies, 50):.2f} ms, p99 {kept['p99'][-1]:.2f} ms, "
                          f"max {max(latencies):.2f} ms, queue p99 {kept['queue'][-1]:.2f} ms, "
                          f"CPU {user_us:.0f} user + {system_us:.0f} system us/scrape, client "
                          f"CPU {load.client_cpu_us:.0f} us/scrape, client woke up to "
                          f"{max(load.oversleep_ms):.2f} ms late")
            for server, kept in figures.items():
                print(f"  {name}, {server}: p99 {spread(kept['p99'], 'ms')}")
                print(f"    queue, 1st to {SCRAPERS}th answer (p99 of bursts) "
                      f"{spread(kept['queue'], 'ms')}")
                print(f"    CPU per scrape {spread(kept['cpu'], 'us', 0)}")
                print(f"    client CPU per scrape {spread(kept['client'], 'us', 0)}")
            endpoint, floor = figures["endpoint"], figures["bare server"]
            ratios = {figure: [ours / bare for ours, bare
                               in zip(endpoint[figure], floor[figure], strict=True)]
                      for figure in ("p99", "cpu")}
            print(f"  endpoint / bare server, run by run: p99 {spread(ratios['p99'], 'x')}, "
                  f"CPU {spread(ratios['cpu'], 'x')}")
        collisions(plain, zipped, output, args.runs)

if __name__ == "__main__":
    main()
