"""Each HTTP server of ``http_candidates.py``, tuned as its documentation advises, judged by
what a user needs (issue #38) while it is attacked: every probe scrape answered within 5 s,
auth enforced, nothing crashed, the log not flooded; a malformed request gets a 4xx or a
closed connection, whatever the code. Each check starts a fresh server under ``prlimit
--nofile=16384`` (the packaged units' LimitNOFILE=; ``--nofile`` sets another) and probes it
with a scraper that logs in as Prometheus does: a new TLS connection every half second from
127.0.0.1, 5 s to answer. The attackers connect from 127.0.0.2 (another client), the password
guessers from rotating addresses. Prints a line per check and the table.

    python http_servers.py                  # every candidate, every check
    python http_servers.py agent cheroot    # some (a prefix of the name will do)
    python http_servers.py --check slowloris --nofile 1024 agent
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
import tempfile
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
ATTACKER = "127.0.0.2"
LOG_LINES = 50  # more than this during one check floods the log
GOOD = "Basic " + base64.b64encode(f"{USER}:".encode() + PASSWORD).decode()
WRONG = "Basic " + base64.b64encode(f"{USER}:guess".encode()).decode()
# Malformed requests (each with the scraper's credentials, so that a server that reads only
# as far as the auth gate would answer 200): a 4xx or a closed connection is what is asked.
MALFORMED = [
    b"GARBAGE\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\n folded: value\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 40\r\n\r\nabc",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\n" + b"X: 1\r\n" * 101 + b"\r\n",
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


@dataclass
class Server:
    port: int
    process: subprocess.Popen
    log: Path

    def log_lines(self) -> int:
        return len(self.log.read_text(errors="replace").splitlines())


@contextlib.contextmanager
def serving(name: str, nofile: int) -> Iterator[Server]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.NamedTemporaryFile(prefix="http-server-", suffix=".log") as log:
        process = subprocess.Popen(
            ["prlimit", f"--nofile={nofile}:{nofile}", "--", sys.executable,
             str(HERE / "http_candidates.py"), name, str(port)],
            cwd=HERE, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while scrape(port, timeout_s=2) != 200:  # ready, and the scraper known from now on
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start")
                time.sleep(0.1)
            yield Server(port, process, Path(log.name))
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def tls_socket(port: int, source: str = ATTACKER) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S,
                                   source_address=(source, 0))
    return client_context().wrap_socket(raw, server_hostname="localhost")


def refused(data: bytes, closed: bool) -> bool:
    """A 4xx, or the connection closed without an answer."""
    status = status_of(data)
    return (status is not None and 400 <= status < 500) or (closed and not data)


def malformed(port: int) -> Result:
    """Each malformed request: a 4xx or the connection closed, within 5 s."""
    probe = Probe(port)
    answers = []
    with probe.running():
        for request in MALFORMED:
            try:
                with tls_socket(port) as sock:
                    sock.sendall(request.replace(
                        b"HTTP/1.1\r\n", f"HTTP/1.1\r\nAuthorization: {GOOD}\r\n".encode(), 1))
                    data, closed = read_until_closed(sock, PROBE_TIMEOUT_S)
            except OSError:
                data, closed = b"", True
            answers.append((refused(data, closed),
                            f"{status_of(data) or ('closed' if closed else 'no answer')}"))
    right = sum(1 for ok, _ in answers if ok)
    return Result(right == len(MALFORMED) and probe.ok,
                  f"{right}/{len(MALFORMED)} refused ({', '.join(got for _, got in answers)}); "
                  f"{probe}")


def pipelined(port: int) -> Result:
    """1,000 requests in one write (the last asks to close), while the scraper scrapes."""
    count = 1000
    last = get().replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
    probe = Probe(port)
    with probe.running():
        try:
            with tls_socket(port) as sock:
                sock.sendall(get() * (count - 1) + last)
                data, _ = read_until_closed(sock, 30)
        except OSError:
            data = b""
    return Result(probe.ok, f"{data.count(BODY)}/{count} answered; {probe}")


def hold(port: int, count: int, first: bytes) -> list[socket.socket]:
    held = []
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S,
                                            source_address=(ATTACKER, 0))
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
    """Plain HTTP on the TLS port: a 4xx or a closed connection, and TLS still served."""
    with socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S) as sock:
        sock.sendall(get())
        data, closed = read_until_closed(sock, PROBE_TIMEOUT_S)
    after = scrape(port)
    return Result(refused(data, closed) and after == 200,
                  f"answer {status_of(data) or 'none'}, "
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
    return Result(probe.ok, f"{probe}; {len(sockets)} slow clients connected, {closed} "
                            "closed by the server within 20 s")


def idle_flood(port: int) -> Result:
    """1,100 connections that send nothing, for 16 s."""
    probe = Probe(port)
    with probe.running():
        held = hold(port, 1100, b"")
        time.sleep(16)
    for sock in held:
        sock.close()
    return Result(probe.ok, f"{probe}; {len(held)} idle connections opened")


def keep_alive_hog(port: int) -> Result:
    """Issue #39 item 4: one client's 600 TLS keep-alive connections, each answered once,
    held for 10 s."""
    probe = Probe(port)
    held: list[ssl.SSLSocket] = []
    with probe.running():
        for _ in range(600):
            try:
                sock = tls_socket(port)
                sock.sendall(get())
                data = b""
                while not data.endswith(BODY):
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        break
                    data += chunk
                held.append(sock)
            except OSError:
                break
        time.sleep(10)
    kept = len(held) - closed_count(held)
    return Result(probe.ok, f"{probe}; {len(held)} kept alive, {kept} still open after 10 s")


def login_attack(port: int) -> Result:
    """20 threads guessing passwords for 10 s, each guess from a new loopback address, while
    the scraper (logged in before) scrapes. A guess answered 200 fails the check."""
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
    seen = ", ".join(f"{status or 'none'}: {count}" for status, count in sorted(
        answers.items(), key=lambda item: item[0] or 0))
    return Result(probe.ok and 200 not in answers, f"{probe}; guesses answered {seen}")


CHECKS: dict[str, Callable[[int], Result]] = {
    "malformed requests": malformed,
    "1,000 pipelined": pipelined,
    "50 stalled TLS handshakes": stalled_handshakes,
    "plain HTTP on the TLS port": plain_on_tls,
    "200 slowloris": slowloris,
    "1,100 idle connections": idle_flood,
    "600 keep-alive, one client": keep_alive_hog,
    "password guessing": login_attack,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidates", nargs="*", metavar="CANDIDATE",
                        help=f"of {', '.join(CANDIDATES)} (default: every one)")
    parser.add_argument("--nofile", type=int, default=16384,
                        help="the servers' file limit (default: the units' LimitNOFILE=16384)")
    parser.add_argument("--check", action="append", default=[], metavar="NAME",
                        help="run only the checks whose name contains NAME (repeatable)")
    args = parser.parse_args()
    names = [name for name in CANDIDATES
             if not args.candidates or any(name.startswith(c) for c in args.candidates)]
    checks = {name: run for name, run in CHECKS.items()
              if not args.check or any(word in name for word in args.check)}
    if not names or not checks:
        parser.error("no such candidate or check")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    print(f"{machine()}; servers at --nofile={args.nofile}", flush=True)
    table: dict[str, list[str]] = {}
    for name in names:
        print(f"\n{name}", flush=True)
        for check, run in checks.items():
            with serving(name, args.nofile) as server:
                result = run(server.port)
                alive = server.process.poll() is None
                lines = server.log_lines()
            passed = result.passed and alive and lines <= LOG_LINES
            table.setdefault(check, []).append("pass" if passed else "FAIL")
            print(f"  {'pass' if passed else 'FAIL'}  {check}: {result.detail}; "
                  f"{'alive' if alive else 'CRASHED'}, {lines} log lines", flush=True)
    print("\n| check | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for check, cells in table.items():
        print(f"| {check} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
