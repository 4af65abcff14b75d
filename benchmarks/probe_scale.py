"""One ``smartarray-agent serve`` answering ``/probe`` for a fleet of slow iLOs, scraped as
Prometheus would scrape them (issue #27 item 4, issue #52 item 9).

The fleet: one ``smartarray-agent simulate ilo gen10 --count N --delay 1 3`` process, N
simulated iLO 5s on as many loopback ports (one event loop), each answering every request
(login, GET, logout) after a random 1-3 s. The scraper: every target once per ``--interval``
(60 s), the targets spread evenly over it, each scrape with the
``X-Prometheus-Scrape-Timeout-Seconds`` header and given up after it (10 s), for
``--minutes``. ``--python`` runs serve with another tree's interpreter (a venv of an older
commit), for a before and an after on one machine.

Printed: the machine; each scrape's answer time, how many went past the timeout and how
many got no HTTP answer at all (the connection dropped); the share of
``smartarray_probe_success 1``; the iLO connections open at once at the fleet (sampled);
serve's RSS sampled over the run, its CPU and its log lines.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spread import machine, spread

TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
AGE = re.compile(r"^smartarray_probe_snapshot_age_seconds (\S+)$", re.MULTILINE)
DURATION = re.compile(r"^smartarray_probe_duration_seconds (\S+)$", re.MULTILINE)
TICK_S = os.sysconf("SC_CLK_TCK")


@contextmanager
def fleet_of(count: int, delay: tuple[float, float],
             folder: Path) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``simulate ilo`` with ``count`` iLOs answering after ``delay``: the process and the
    targets; its certificate and login are in ``folder``."""
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(folder / "sim")}
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "simulate", "ilo", "gen10", "--port", "0",
         "--count", str(count), "--delay", str(delay[0]), str(delay[1]), "--dir",
         str(folder / "ilo")], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        stderr=(folder / "fleet.log").open("w"), env=env)
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.readline()  # the certificate's line: targets.json is written now
    targets = json.loads((folder / "ilo" / "targets.json").read_text())[0]["targets"]
    try:
        yield process, targets
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def serve_process(folder: Path, python: str, max_sessions: int, min_interval_s: float,
                  extra: str) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """``smartarray-agent serve`` with a [probe] table for the fleet: the process, its
    ``host:port`` and its log lines (read on a thread so that the pipe never fills)."""
    published = folder / "published"
    published.mkdir(mode=0o750)
    ilo = folder / "ilo"
    config = folder / "config.toml"
    config.write_text(
        f'[web]\npublish_dir = "{published}"\n[probe]\ntargets = ["127.0.0.1:*"]\n'
        f"max_sessions = {max_sessions}\nmin_interval_s = {min_interval_s}\n{extra}"
        f'[probe.modules.default]\ncredentials_file = "{ilo / "ilo-credentials.toml"}"\n'
        f'ca_file = "{ilo / "ilo.pem"}"\nconnect_timeout_s = 10\nread_timeout_s = 10\n')
    process = subprocess.Popen(
        [python, "-m", "smartarray_agent", "serve", "--config", str(config),
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
    error: str | None = None  # no HTTP answer: why (the exception's name)


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
    except (OSError, http.client.HTTPException) as error:
        return Scrape(time.monotonic() - started, False, False, error=type(error).__name__)
    finally:
        connection.close()


def ilo_connections(ports: set[int]) -> int:
    """Established TCP connections to the fleet's ports, at the fleet's side."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        count += state == "01" and int(local.split(":")[1], 16) in ports
    return count


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
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter serve runs with (another tree's venv)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"{args.targets} simulated iLO 5s answering each request after {args.delay[0]:g}-"
          f"{args.delay[1]:g} s; each scraped every {args.interval:g} s with a "
          f"{args.scrape_timeout:g} s timeout for {args.minutes:g} min; [probe] max_sessions "
          f"= {args.max_sessions}, min_interval_s = {args.min_interval:g} "
          f"{args.probe_extra.strip()}; serve on {args.python}")
    rounds = max(1, round(args.minutes * 60 / args.interval))
    with tempfile.TemporaryDirectory(prefix="probe-scale-") as temp, \
            fleet_of(args.targets, args.delay, Path(temp)) as (fleet, targets), \
            serve_process(Path(temp), args.python, args.max_sessions, args.min_interval,
                          args.probe_extra) as (process, address, log_lines), \
            ThreadPoolExecutor(max(16, int(args.targets * args.scrape_timeout
                                           / args.interval) * 2)) as scrapers:
        ports = {int(target.rsplit(":", 1)[1]) for target in targets}
        rss = [(0.0, rss_mib(process.pid))]
        cpu_start = cpu_s(process.pid)
        most_connections = [0]
        stop = threading.Event()

        def sample() -> None:  # iLO connections every second, RSS every 5 s
            next_rss = time.monotonic() + 5
            while not stop.wait(1.0):
                most_connections[0] = max(most_connections[0], ilo_connections(ports))
                if time.monotonic() >= next_rss:
                    rss.append((time.monotonic() - started, rss_mib(process.pid)))
                    next_rss += 5

        started = time.monotonic()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        futures = []
        for index in range(rounds * len(targets)):
            due = started + index * args.interval / len(targets)
            time.sleep(max(0.0, due - time.monotonic()))
            futures.append(scrapers.submit(scrape, address, targets[index % len(targets)],
                                           args.scrape_timeout))
        results = [future.result() for future in futures]
        elapsed = time.monotonic() - started
        cpu = cpu_s(process.pid) - cpu_start
        stop.set()
        sampler.join()
        rss.append((elapsed, rss_mib(process.pid)))
        fleet_rss = rss_mib(fleet.pid)
        fleet_errors = (Path(temp) / "fleet.log").read_text().count("Error handling request")
    report(args, results, most_connections[0], rss, cpu, elapsed, log_lines,
           f"its RSS at the end {fleet_rss:.0f} MiB, {fleet_errors} requests it failed to handle")


def report(args: argparse.Namespace, results: list[Scrape], connections: int,
           rss: list[tuple[float, float]], cpu: float, elapsed: float, log_lines: list[str],
           fleet: str) -> None:
    took = [result.took_s for result in results]
    late = sum(not result.answered for result in results)
    dropped = Counter(result.error for result in results if result.error is not None)
    successes = sum(result.success for result in results)
    print(f"scrapes: {len(results)}; answer time {spread(took, 's', 3, 'scrapes')}, "
          f"p50 {percentile(took, 0.5):.3f} s, p90 {percentile(took, 0.9):.3f} s, "
          f"p99 {percentile(took, 0.99):.3f} s")
    print(f"  not answered within {args.scrape_timeout:g} s: {late} "
          f"({100 * late / len(results):.1f} %); of them no HTTP answer at all: "
          f"{sum(dropped.values())} {dict(dropped)}")
    print(f"  smartarray_probe_success 1: {successes} ({100 * successes / len(results):.1f} %)")
    ages = [result.age_s for result in results if result.success and result.age_s is not None]
    if ages:
        print(f"  age of the snapshot answered (successes): {spread(ages, 's', 1, 'scrapes')}, "
              f"p99 {percentile(ages, 0.99):.1f} s")
    reads = [result.read_s for result in results if result.success and result.read_s]
    if reads:
        print(f"  how long the read answered took (successes): {spread(reads, 's', 1, 'scrapes')}")
    by_minute: dict[int, list[bool]] = {}  # by the minute the scrape was due in
    for index, result in enumerate(results):
        by_minute.setdefault(int(index * args.interval / args.targets // 60), []).append(
            result.success)
    print("  smartarray_probe_success 1, minute by minute: " + ", ".join(
        f"{100 * sum(found) / len(found):.1f} %" for _, found in sorted(by_minute.items())))
    print(f"iLO connections open at once at the fleet, most (sampled each second): "
          f"{connections} (max_sessions = {args.max_sessions}); the fleet: {fleet}")
    minutes = [rss[0]] + [next(sample for sample in rss if sample[0] >= minute * 60)
                          for minute in range(1, int(rss[-1][0] // 60) + 1)] + [rss[-1]]
    print("serve RSS, MiB: " + ", ".join(f"{mib:.1f} at {at:.0f} s" for at, mib in minutes))
    print(f"serve CPU: {cpu:.1f} s in {elapsed:.0f} s ({100 * cpu / elapsed:.1f} % of one CPU)")
    print(f"serve log: {len(log_lines)} lines"
          + (f"; the last: {log_lines[-1].strip()}" if log_lines else ""))
    stopping = next((n for n, line in enumerate(log_lines) if "SIGTERM: stopping" in line),
                    len(log_lines))
    kinds = Counter(re.sub(r"\d+", "N", line.split(" ", 3)[-1].strip())[:100]
                    for line in log_lines[:stopping] if re.match(r"\d{4}-\d\d-\d\d ", line))
    print(f"  before SIGTERM, by kind (numbers as N; {len(log_lines) - stopping} lines after, "
          "the reads under way cancelled and logged out):")
    for kind, count in kinds.most_common(6):
        print(f"  {count} x {kind}")


if __name__ == "__main__":
    main()
