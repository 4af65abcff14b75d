"""Each HTTP server of ``http_candidates.py`` against what the endpoint's tests ask of the
agent's own (tests/test_security_http.py, test_http_limits.py, test_http_reads.py,
test_security_flood.py): malformed requests, pipelining, a stalled TLS handshake, plain HTTP
on the TLS port, slowloris, a flood of idle connections at the units' file limit, and
password guessing from rotating addresses. Each check starts a fresh server under
``prlimit --nofile=1024`` (LimitNOFILE= of both units; ``--nofile`` sets another) and probes
it with a scraper that logs in as Prometheus does: a new TLS connection every half second,
5 s to answer. A check passes when every probe is answered 200 and the server does what the
test asks.

    python http_servers.py                  # every candidate, every check
    python http_servers.py ours cheroot     # some
    python http_servers.py --nofile 65536 --check slowloris aiohttp
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import resource
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from http_candidates import BODY, CANDIDATES, CERT, PASSWORD, USER
from spread import machine

HERE = Path(__file__).resolve().parent
PROBE_EVERY_S = 0.5
PROBE_TIMEOUT_S = 5.0
GOOD = "Basic " + base64.b64encode(f"{USER}:".encode() + PASSWORD).decode()
WRONG = "Basic " + base64.b64encode(f"{USER}:guess".encode()).decode()
# What test_a_bad_request_gets_its_status_and_the_connection_closes sends, and the status
# it asks for. The check adds the scraper's credentials after a request line, so that a
# server which reads the request only as far as the auth gate answers 200, not 401.
MALFORMED = [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /metrics\r\n\r\n", 400),
    (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
    (b"GET /metrics HTTP/1.1\r\nBad Header\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\n folded: value\r\n\r\n", 400),
    (b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 405),
    (b"GET /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 400),
    (b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n", 431),
    (b"GET /metrics HTTP/1.1\r\n" + b"X: 1\r\n" * 101 + b"\r\n", 431),
]


def client_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(CERT))


def get(authorization: str = GOOD) -> bytes:
    return (f"GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: {authorization}"
            "\r\n\r\n").encode()


def read_until_closed(sock: socket.socket, timeout_s: float) -> tuple[bytes, bool]:
    """What the server sends until it closes (True) or ``timeout_s`` passes (False)."""
    data = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            chunk = sock.recv(1 << 20)
            if not chunk:
                return bytes(data), True
            data += chunk
    except TimeoutError:
        return bytes(data), False
    except (ConnectionResetError, ssl.SSLError):
        return bytes(data), True
    return bytes(data), False


def status_of(data: bytes) -> int | None:
    parts = data.split(b"\r\n", 1)[0].split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def scrape(port: int, authorization: str = GOOD, source: str = "127.0.0.1",
           timeout_s: float = PROBE_TIMEOUT_S) -> int | None:
    """One scrape on a new TLS connection: the status, None when there was no full answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s,
                                      source_address=(source, 0)) as raw, \
                client_context().wrap_socket(raw, server_hostname="localhost") as sock:
            sock.sendall(get(authorization).replace(b"\r\n\r\n",
                                                    b"\r\nConnection: close\r\n\r\n"))
            data, closed = read_until_closed(sock, timeout_s)
    except OSError:
        return None
    status = status_of(data)
    return status if status != 200 or data.endswith(BODY) else None


@dataclass
class Probe:
    """A scraper in a thread: a scrape every PROBE_EVERY_S until stopped."""

    port: int
    answered: int = 0
    failed: int = 0
    slowest_s: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            if scrape(self.port) == 200:
                self.answered += 1
            else:
                self.failed += 1
            took = time.monotonic() - started
            self.slowest_s = max(self.slowest_s, took)
            self._stop.wait(max(0.0, PROBE_EVERY_S - took))

    @contextlib.contextmanager
    def running(self) -> Iterator[Probe]:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.answered > 0

    def __str__(self) -> str:
        return (f"probes {self.answered}/{self.answered + self.failed} answered, "
                f"slowest {self.slowest_s:.2f} s")


@dataclass
class Result:
    passed: bool
    detail: str


@contextlib.contextmanager
def serving(name: str, nofile: int) -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        ["prlimit", f"--nofile={nofile}:{nofile}", "--", sys.executable,
         str(HERE / "http_candidates.py"), name, str(port)],
        cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while scrape(port, timeout_s=2) != 200:  # ready, and the scraper known from now on
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start")
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tls_socket(port: int) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S)
    return client_context().wrap_socket(raw, server_hostname="localhost")


def malformed(port: int) -> Result:
    """Each malformed request of the tests: its status, and the connection closed."""
    answers = []
    for request, expected in MALFORMED:
        try:
            with tls_socket(port) as sock:
                sock.sendall(request.replace(b"HTTP/1.1\r\n",
                                             f"HTTP/1.1\r\nAuthorization: {GOOD}\r\n".encode(), 1))
                data, closed = read_until_closed(sock, PROBE_TIMEOUT_S)
        except OSError:
            data, closed = b"", False
        status = status_of(data)
        answers.append((status == expected and closed,
                        f"{status or '-'}{'' if closed else ' open'}"))
    right = sum(1 for ok, _ in answers if ok)
    return Result(right == len(MALFORMED) and scrape(port) == 200,
                  f"{right}/{len(MALFORMED)} answered with the tests' status and closed "
                  f"(got {', '.join(got for _, got in answers)})")


def pipelined(port: int) -> Result:
    """1,000 requests in one write, answered in turn (the last asks to close)."""
    count = 1000
    last = get().replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
    try:
        with tls_socket(port) as sock:
            sock.sendall(get() * (count - 1) + last)
            data, _ = read_until_closed(sock, 30)
    except OSError:
        data = b""
    answers = data.count(BODY)
    return Result(answers == count, f"{answers}/{count} answered")


def hold(port: int, count: int, first: bytes) -> list[socket.socket]:
    held = []
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S)
        except OSError:
            break
        if first:
            with contextlib.suppress(OSError):
                sock.sendall(first)
        held.append(sock)
    return held


def closed_count(sockets: list[socket.socket] | list[ssl.SSLSocket]) -> int:
    """How many of ``sockets`` the server has closed (each then closed here too)."""
    closed = 0
    for sock in sockets:
        sock.settimeout(0.01)
        try:
            if sock.recv(65536) == b"":
                closed += 1
        except TimeoutError:
            pass
        except OSError:
            closed += 1
        sock.close()
    return closed


def stalled_handshakes(port: int) -> Result:
    """50 clients that send the start of a ClientHello and no more, for 15 s."""
    probe = Probe(port)
    with probe.running():
        held = hold(port, 50, b"\x16\x03\x01")
        time.sleep(15)
    closed = closed_count(held)
    return Result(probe.ok, f"{probe}; {closed}/50 stalled connections closed by the server")


def plain_on_tls(port: int) -> Result:
    """Plain HTTP on the TLS port: an answer that says so, and TLS still served."""
    with socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S) as sock:
        sock.sendall(get())
        data, closed = read_until_closed(sock, PROBE_TIMEOUT_S)
    status = status_of(data)
    after = scrape(port)
    return Result(status == 400 and closed and after == 200,
                  f"answer {status if status else 'none'}, "
                  f"{'closed' if closed else 'left open'}; next TLS scrape {after}")


def slowloris(port: int) -> Result:
    """200 TLS clients that send a request a byte a second, for 20 s."""
    probe = Probe(port)
    sockets: list[ssl.SSLSocket] = []
    with probe.running():
        for _ in range(200):
            try:
                sockets.append(tls_socket(port))
            except OSError:
                break
        for second in range(20):
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.send(get()[second:second + 1])
            time.sleep(1)
    closed = closed_count(sockets)
    return Result(probe.ok and len(sockets) == 200,
                  f"{probe}; {len(sockets)} slow clients connected, {closed} closed by the "
                  "server within 20 s")


def idle_flood(port: int) -> Result:
    """1,100 connections that send nothing, past the server's file limit, for 16 s."""
    probe = Probe(port)
    with probe.running():
        held = hold(port, 1100, b"")
        time.sleep(16)
    for sock in held:
        sock.close()
    return Result(probe.ok, f"{probe}; {len(held)} idle connections opened")


def login_attack(port: int) -> Result:
    """20 threads guessing passwords for 10 s, each guess from a new loopback address, while
    the scraper (logged in before) scrapes."""
    stop = threading.Event()
    answers: dict[int | None, int] = {}
    lock = threading.Lock()

    def guess(thread: int) -> None:
        number = 0
        while not stop.is_set():
            number += 1
            source = f"127.{thread + 1}.{number // 250 % 250 + 1}.{number % 250 + 1}"
            status = scrape(port, WRONG, source=source)
            with lock:
                answers[status] = answers.get(status, 0) + 1

    probe = Probe(port)
    with probe.running():
        threads = [threading.Thread(target=guess, args=(n,), daemon=True) for n in range(20)]
        for thread in threads:
            thread.start()
        time.sleep(10)
        stop.set()
        for thread in threads:
            thread.join()
    refused = ", ".join(f"{status or 'none'}: {count}" for status, count in sorted(
        answers.items(), key=lambda item: item[0] or 0))
    return Result(probe.ok, f"{probe}; guesses answered {refused}")


CHECKS: dict[str, Callable[[int], Result]] = {
    "malformed requests": malformed,
    "1,000 pipelined": pipelined,
    "stalled TLS handshakes": stalled_handshakes,
    "plain HTTP on the TLS port": plain_on_tls,
    "slowloris": slowloris,
    "idle connection flood": idle_flood,
    "password guessing": login_attack,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidates", nargs="*", metavar="CANDIDATE",
                        help=f"of {', '.join(CANDIDATES)} (default: every one)")
    parser.add_argument("--nofile", type=int, default=1024,
                        help="the servers' file limit (default: the units' LimitNOFILE=, 1024)")
    parser.add_argument("--check", action="append", default=[], metavar="NAME",
                        help="run only this check (repeatable; default: every one)")
    args = parser.parse_args()
    if unknown := set(args.candidates) - set(CANDIDATES):
        parser.error(f"no such candidate: {', '.join(sorted(unknown))}")
    if unknown := set(args.check) - set(CHECKS):
        parser.error(f"no such check: {', '.join(sorted(unknown))}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    print(f"{machine()}; servers at --nofile={args.nofile}", flush=True)
    checks = {name: run for name, run in CHECKS.items() if name in args.check or not args.check}
    for name in args.candidates or CANDIDATES:
        passed = 0
        print(f"\n{name}", flush=True)
        for check, run in checks.items():
            with serving(name, args.nofile) as port:
                result = run(port)
            passed += result.passed
            print(f"  {'pass' if result.passed else 'FAIL'}  {check}: {result.detail}",
                  flush=True)
        print(f"  {passed}/{len(checks)} checks passed", flush=True)


if __name__ == "__main__":
    main()
