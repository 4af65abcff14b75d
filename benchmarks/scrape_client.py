"""Scrapers for scrape_bench.py and endpoint_bench.py: one process, one thread, epoll.

What is measured is the endpoint's queue, not the client's (no client threads taking turns
at a GIL, no http.client parsing). Run apart from the agent, it reports its own CPU.

Every scraper has its own keep-alive connection; all connect and make one checked scrape
first, so a load times scrapes, not TCP handshakes. Each scrape is timed from the moment
its request is written (just before its ``send``) to its answer's last byte.

- ``burst``: ``--rounds`` times, every scraper's request is written back to back in one loop
  (the "same instant": the spread of those writes is reported), then the answers are read
  as they come; ``--pause`` seconds between rounds.
- ``paced``: each scraper scrapes every ``--pace`` seconds, the scrapers spread evenly over
  that period, for ``--seconds``; a scrape that falls due while the scraper's previous
  answer is still coming is skipped and counted.

Prints one JSON object: latencies (seconds), the client's CPU (user + system) and, for a
burst, per round: the time from its first write to its last, from its first answer
complete to its last (the endpoint's queue), and how much later than asked the client woke
from its pause before the round (what the machine's scheduler adds to any latency here).

    python scrape_client.py HOST:PORT burst|paced [--gzip] [--scrapers 50] ...
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import json
import os
import select
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Load:
    """What a run of the client measured."""

    latencies_ms: list[float]
    client_cpu_us: float  # per scrape
    send_spread_ms: list[float]  # per burst: its first write to its last
    queue_ms: list[float]  # per burst: its first answer complete to its last
    oversleep_ms: list[float]  # per burst: the client's lateness waking up before it
    skipped: int  # paced: scrapes not sent, the previous answer still coming


def measure(host: str, load: str, gzipped: bool, *options: str) -> Load:
    """Run the client in a process of its own against ``host`` and read what it measured."""
    command = [sys.executable, str(Path(__file__)), host, load, *options]
    if gzipped:
        command.append("--gzip")
    result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                       timeout=600).stdout)
    latencies = result["latencies"]

    def ms(key: str) -> list[float]:
        return [t * 1000 for t in result.get(key, [])]

    return Load(ms("latencies"), result["client_cpu_s"] / len(latencies) * 1e6,
                ms("send_spreads"), ms("queues"), ms("oversleeps"),
                sum(result.get("skipped", [])))


class Scraper:
    """One keep-alive connection and the answer it is reading."""

    _scratch = memoryview(bytearray(_CHUNK))  # what every read lands in: nothing allocated

    def __init__(self, address: tuple[str, int], request: bytes) -> None:
        self.sock = socket.create_connection(address, timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request = request
        self.sent_at = 0.0
        self.received = 0
        self.expected = -1  # bytes of the whole answer, once its head is in
        self.kept = bytearray()  # the answer, when asked to keep it

    def send(self) -> None:
        self.received = 0
        self.expected = -1
        self.sent_at = time.perf_counter()  # before: a pause after the send counts, not hides
        self.sock.sendall(self.request)

    def read(self, keep: bool = False) -> bool:
        """Read what is there; True when the whole answer is in. The head must come in
        the answer's first read (it is a few hundred bytes)."""
        count = self.sock.recv_into(self._scratch)
        if count == 0:
            raise ConnectionError("the endpoint closed the connection")
        data = self._scratch[:count]
        if self.expected < 0:
            head = bytes(data[:data.tobytes().find(b"\r\n\r\n") + 4])
            if not head.startswith(b"HTTP/1.1 200 "):
                raise RuntimeError(f"answer: {head[:60]!r}")
            start = head.find(b"Content-Length: ") + 16
            self.expected = len(head) + int(head[start:head.find(b"\r", start)])
        if keep:
            self.kept += data
        self.received += count
        return self.received >= self.expected


def connect(address: tuple[str, int], count: int, gzipped: bool) -> list[Scraper]:
    request = ("GET /metrics HTTP/1.1\r\nHost: bench\r\n"
               + ("Accept-Encoding: gzip\r\n" if gzipped else "") + "\r\n").encode()
    scrapers = [Scraper(address, request) for _ in range(count)]
    for scraper in scrapers:  # one checked scrape each, blocking
        scraper.send()
        while not scraper.read(keep=True):
            pass
        body = bytes(scraper.kept[scraper.kept.find(b"\r\n\r\n") + 4:])
        if b'controller="7"' not in (gzip.decompress(body) if gzipped else body):
            raise RuntimeError("the exposition is not the large scenario's")
        scraper.sock.setblocking(False)
    return scrapers


def burst(scrapers: list[Scraper], rounds: int, pause: float) -> dict[str, list[float]]:
    latencies: list[float] = []
    spreads: list[float] = []
    queues: list[float] = []
    oversleeps: list[float] = []
    poller = select.epoll()
    by_fd = {scraper.sock.fileno(): scraper for scraper in scrapers}
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    for _ in range(rounds):
        slept_at = time.perf_counter()
        time.sleep(pause)
        oversleeps.append(time.perf_counter() - slept_at - pause)
        for scraper in scrapers:
            scraper.send()
        spreads.append(scrapers[-1].sent_at - scrapers[0].sent_at)
        done: list[float] = []
        while len(done) < len(scrapers):
            for fd, _ in poller.poll(30):
                scraper = by_fd[fd]
                if scraper.read():
                    done.append(time.perf_counter())
                    latencies.append(done[-1] - scraper.sent_at)
        queues.append(done[-1] - done[0])
    poller.close()
    return {"latencies": latencies, "send_spreads": spreads, "queues": queues,
            "oversleeps": oversleeps}


def paced(scrapers: list[Scraper], seconds: float, pace: float) -> dict[str, list[float]]:
    latencies: list[float] = []
    poller = select.epoll()
    by_fd = {scraper.sock.fileno(): scraper for scraper in scrapers}
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    start = time.perf_counter()
    stop_at = start + seconds
    due = [(start + i * pace / len(scrapers), i) for i in range(len(scrapers))]
    in_flight: set[Scraper] = set()
    skipped = 0
    while due or in_flight:
        now = time.perf_counter()
        while due and due[0][0] <= now:
            at, i = heapq.heappop(due)
            if scrapers[i] in in_flight:  # its last answer is not in yet: as Prometheus,
                skipped += 1  # skip this scrape rather than pile up
            else:
                scrapers[i].send()
                in_flight.add(scrapers[i])
            if at + pace < stop_at:
                heapq.heappush(due, (at + pace, i))
        timeout = max(0.0, due[0][0] - time.perf_counter()) if due else 30.0
        for fd, _ in poller.poll(timeout):
            scraper = by_fd[fd]
            if scraper.read():
                latencies.append(time.perf_counter() - scraper.sent_at)
                in_flight.discard(scraper)
    poller.close()
    return {"latencies": latencies, "skipped": [skipped]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", help="HOST:PORT")
    parser.add_argument("load", choices=("burst", "paced"))
    parser.add_argument("--gzip", action="store_true", help="ask as Prometheus asks")
    parser.add_argument("--scrapers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=40, help="bursts")
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between bursts")
    parser.add_argument("--seconds", type=float, default=5.0, help="paced load duration")
    parser.add_argument("--pace", type=float, default=0.1,
                        help="seconds between scrapes of one scraper")
    args = parser.parse_args()
    host, port = args.host.rsplit(":", 1)
    scrapers = connect((host, int(port)), args.scrapers, args.gzip)
    before = os.times()
    if args.load == "burst":
        result = burst(scrapers, args.rounds, args.pause)
    else:
        result = paced(scrapers, args.seconds, args.pace)
    after = os.times()
    for scraper in scrapers:
        scraper.sock.close()
    cpu = after.user + after.system - before.user - before.system
    print(json.dumps({**result, "client_cpu_s": cpu}))


if __name__ == "__main__":
    main()
