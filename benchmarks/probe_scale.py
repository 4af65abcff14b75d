"""One ``smartarray-agent serve`` answering ``/probe`` for a fleet of slow fake iLOs, scraped
as Prometheus would scrape them (issue #27 item 4).

The fleet: ``--targets`` fake iLO 5s (tests/redfish_ilo.py, the tree of
tests/redfish_data/ilo5-p408i-a-gen10.json) over real HTTPS on as many loopback ports, all
accepted by one selector thread, each answering every request (login, GET, logout) after a
random ``--delay`` (1-3 s). The scraper: every target once per ``--interval`` (60 s), the
targets spread evenly over it, each scrape with the ``X-Prometheus-Scrape-Timeout-Seconds``
header and given up after it (10 s), for ``--minutes``.

Printed: the machine; each scrape's answer time and how many went past the timeout; the
share of ``smartarray_probe_success 1``; the most iLO connections and logged-in sessions
open at once at the fleet against ``max_sessions``, and the sessions never logged out; the
shortest time between two logins of one target against ``min_interval_s``; serve's RSS
sampled over the run and its CPU.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import selectors
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from spread import machine, spread

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.redfish_ilo import (  # noqa: E402  (the repository's root is on the path now)
    ILO5_TREE,
    Ilo,
    _Handler,
    _Server,
    certificate,
    credentials_file,
    tree,
)

TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
AGE = re.compile(r"^smartarray_probe_snapshot_age_seconds (\S+)$", re.MULTILINE)
DURATION = re.compile(r"^smartarray_probe_duration_seconds (\S+)$", re.MULTILINE)
TICK_S = os.sysconf("SC_CLK_TCK")


@dataclass
class Fleet:
    """What the fake iLOs saw, all of them together."""

    delay: tuple[float, float]
    lock: threading.Lock = field(default_factory=threading.Lock)
    connections: int = 0
    most_connections: int = 0
    login_attempts: dict[str, list[float]] = field(default_factory=dict)  # address -> times


class _SlowHandler(_Handler):
    """The tests' fake iLO, answering each request after a random delay; it counts the
    connections open at once."""

    fleet: Fleet  # set on the class made per run

    def setup(self) -> None:
        with self.fleet.lock:
            self.fleet.connections += 1
            self.fleet.most_connections = max(self.fleet.most_connections,
                                              self.fleet.connections)
        super().setup()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.fleet.lock:
                self.fleet.connections -= 1

    def _wait(self) -> None:
        time.sleep(random.uniform(*self.fleet.delay))

    def do_GET(self) -> None:
        self._wait()
        super().do_GET()

    def do_POST(self) -> None:
        self.fleet.login_attempts[self.server.ilo.address].append(time.monotonic())
        self._wait()
        super().do_POST()

    def do_DELETE(self) -> None:
        self._wait()
        super().do_DELETE()


@contextmanager
def fleet_of(count: int, fleet: Fleet) -> Iterator[list[Ilo]]:
    """``count`` fake iLOs on 127.0.0.1, one port each, served by one selector thread (each
    connection then by a thread of its own, as the tests' fake iLO does)."""
    cert, key = certificate()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    handler = type("Handler", (_SlowHandler,), {"fleet": fleet})
    servers = []
    selector = selectors.DefaultSelector()
    for _ in range(count):
        ilo = Ilo(tree(ILO5_TREE))
        server = _Server(ilo, tls)
        server.RequestHandlerClass = handler
        ilo.address = f"127.0.0.1:{server.server_address[1]}"
        fleet.login_attempts[ilo.address] = []
        servers.append(server)
        selector.register(server, selectors.EVENT_READ)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            for key, _ in selector.select(0.2):
                key.fileobj._handle_request_noblock()  # type: ignore[union-attr]

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield [server.ilo for server in servers]
    finally:
        stop.set()
        for server in servers:
            server.ilo.release.set()
        thread.join(5)
        for server in servers:
            server.server_close()


@contextmanager
def serve_process(folder: Path, max_sessions: int, min_interval_s: float,
                  extra: str) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """``smartarray-agent serve`` with a [probe] table for the fleet: the process, its
    ``host:port`` and its log lines (read on a thread so that the pipe never fills)."""
    published = folder / "published"
    published.mkdir(mode=0o750)
    config = folder / "config.toml"
    config.write_text(
        f'[web]\npublish_dir = "{published}"\n[probe]\ntargets = ["127.0.0.1:*"]\n'
        f"max_sessions = {max_sessions}\nmin_interval_s = {min_interval_s}\n{extra}"
        f'[probe.modules.default]\ncredentials_file = "{credentials_file(folder)}"\n'
        f'ca_file = "{certificate()[0]}"\nconnect_timeout_s = 10\nread_timeout_s = 10\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
         "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first = process.stderr.readline()
    if "serving" not in first:
        process.kill()
        raise SystemExit(f"serve did not start: {first}{process.stderr.read()}")
    address = first.rsplit("http://", 1)[1].split("/", 1)[0]
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    try:
        yield process, address, lines
    finally:
        process.terminate()
        process.wait(30)


@dataclass(frozen=True)
class Scrape:
    took_s: float
    answered: bool  # a 200 within the scrape timeout
    success: bool  # smartarray_probe_success 1
    age_s: float | None = None  # smartarray_probe_snapshot_age_seconds, when answered so
    read_s: float | None = None  # smartarray_probe_duration_seconds: how long the read took


def scrape(address: str, target: str, timeout_s: float) -> Scrape:
    """One Prometheus scrape of ``/probe?target=``: given up after ``timeout_s``."""
    host, port = address.rsplit(":", 1)
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout_s)
    try:
        connection.request("GET", f"/probe?target={target}",
                           headers={TIMEOUT_HEADER: f"{timeout_s:g}"})
        answer = connection.getresponse()
        body = answer.read().decode()
        took = time.monotonic() - started
        age, read = AGE.search(body), DURATION.search(body)
        return Scrape(took, answer.status == 200 and took <= timeout_s,
                      "\nsmartarray_probe_success 1.0\n" in f"\n{body}",
                      float(age.group(1)) if age else None,
                      float(read.group(1)) if read else None)
    except (OSError, http.client.HTTPException):
        return Scrape(time.monotonic() - started, False, False)
    finally:
        connection.close()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK_S  # utime + stime


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=500)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--interval", type=float, default=60.0, help="scrape interval, s")
    parser.add_argument("--scrape-timeout", type=float, default=10.0)
    parser.add_argument("--delay", type=float, nargs=2, default=(1.0, 3.0),
                        help="each iLO answer's delay, s: uniform between these")
    parser.add_argument("--max-sessions", type=int, default=4)
    parser.add_argument("--min-interval", type=float, default=60.0)
    parser.add_argument("--probe-extra", default="",
                        help="more [probe] lines for serve's config (TOML)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"{args.targets} fake iLO 5s answering each request after {args.delay[0]:g}-"
          f"{args.delay[1]:g} s; each scraped every {args.interval:g} s with a "
          f"{args.scrape_timeout:g} s timeout for {args.minutes:g} min; [probe] max_sessions "
          f"= {args.max_sessions}, min_interval_s = {args.min_interval:g} "
          f"{args.probe_extra.strip()}")
    fleet = Fleet((args.delay[0], args.delay[1]))
    rounds = max(1, round(args.minutes * 60 / args.interval))
    with tempfile.TemporaryDirectory(prefix="probe-scale-") as folder, \
            fleet_of(args.targets, fleet) as ilos, \
            serve_process(Path(folder), args.max_sessions, args.min_interval,
                          args.probe_extra) as (process, address, log_lines), \
            ThreadPoolExecutor(max(16, int(args.targets * args.scrape_timeout
                                           / args.interval) * 2)) as scrapers:
        rss = [(0.0, rss_mib(process.pid))]
        cpu_start = cpu_s(process.pid)
        sessions_open = [0]
        stop = threading.Event()

        def sample() -> None:  # logged-in sessions every 50 ms, RSS every 5 s
            next_rss = time.monotonic() + 5
            while not stop.wait(0.05):
                open_now = sum(len(ilo.logins) - len(ilo.logouts) for ilo in ilos)
                sessions_open[0] = max(sessions_open[0], open_now)
                if time.monotonic() >= next_rss:
                    rss.append((time.monotonic() - started, rss_mib(process.pid)))
                    next_rss += 5

        started = time.monotonic()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        futures = []
        for index in range(rounds * len(ilos)):
            due = started + index * args.interval / len(ilos)
            time.sleep(max(0.0, due - time.monotonic()))
            target = ilos[index % len(ilos)].address
            futures.append(scrapers.submit(scrape, address, target, args.scrape_timeout))
        results = [future.result() for future in futures]
        elapsed = time.monotonic() - started
        cpu = cpu_s(process.pid) - cpu_start
        stop.set()
        sampler.join()
        rss.append((elapsed, rss_mib(process.pid)))
        leaked = sum(len(ilo.logins) - len(ilo.logouts) for ilo in ilos)
        logins = sum(len(ilo.logins) for ilo in ilos)
    report(args, results, fleet, sessions_open[0], leaked, logins, rss, cpu, elapsed,
           log_lines)


def report(args: argparse.Namespace, results: list[Scrape], fleet: Fleet, sessions: int,
           leaked: int, logins: int, rss: list[tuple[float, float]], cpu: float,
           elapsed: float, log_lines: list[str]) -> None:
    took = [result.took_s for result in results]
    late = sum(not result.answered for result in results)
    successes = sum(result.success for result in results)
    print(f"scrapes: {len(results)}; answer time {spread(took, 's', 3, 'scrapes')}, "
          f"p99 {percentile(took, 0.99):.3f} s")
    print(f"  not answered within {args.scrape_timeout:g} s: {late} "
          f"({100 * late / len(results):.1f} %)")
    print(f"  smartarray_probe_success 1: {successes} ({100 * successes / len(results):.1f} %)")
    ages = [result.age_s for result in results if result.success and result.age_s is not None]
    if ages:
        print(f"  age of the snapshot answered (successes): {spread(ages, 's', 1, 'scrapes')}, "
              f"p99 {percentile(ages, 0.99):.1f} s")
    reads = [result.read_s for result in results if result.success and result.read_s]
    if reads:
        print(f"  how long the read answered took (successes): {spread(reads, 's', 1, 'scrapes')}")
    second_half = results[len(results) // 2:]
    print(f"  in the second half of the run: smartarray_probe_success 1 in "
          f"{100 * sum(result.success for result in second_half) / len(second_half):.1f} %")
    print(f"iLO connections open at once, most: {fleet.most_connections}; logged-in sessions "
          f"open at once, most: {sessions} (max_sessions = {args.max_sessions}); not logged "
          f"out when the scraping ended: {leaked} of {logins} logins (reads under way count "
          f"here, at most max_sessions)")
    gaps = [second - first for times in fleet.login_attempts.values()
            for first, second in pairwise(times)]
    tried = [len(times) for times in fleet.login_attempts.values()]
    per_interval = [count * args.min_interval / elapsed for count in tried]
    shortest = f"{min(gaps):.1f} s" if gaps else "none logged in to twice"
    print(f"login attempts per target: {spread([float(n) for n in tried], '', 0, 'targets')} "
          f"in {elapsed / 60:.1f} min, {statistics.mean(per_interval):.2f} per min_interval_s "
          f"on average; shortest time between two of one target: {shortest}")
    minutes = [rss[0]] + [next(sample for sample in rss if sample[0] >= minute * 60)
                          for minute in range(1, int(rss[-1][0] // 60) + 1)] + [rss[-1]]
    print("serve RSS, MiB: " + ", ".join(f"{mib:.1f} at {at:.0f} s" for at, mib in minutes))
    print(f"serve CPU: {cpu:.1f} s in {elapsed:.0f} s ({100 * cpu / elapsed:.1f} % of one CPU)")
    print(f"serve log: {len(log_lines)} lines"
          + (f"; the last: {log_lines[-1].strip()}" if log_lines else ""))


if __name__ == "__main__":
    main()
