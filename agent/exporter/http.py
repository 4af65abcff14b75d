"""The HTTP endpoint: ``/metrics`` (the last exposition, never a vendor CLI call; gzip when
the scraper accepts it, as Prometheus does), ``/`` (a small page linking to it) and
``/-/healthy``, and ``/probe`` when a :class:`~smartarray_agent.exporter.probe.Prober` is
set (another host's iLO; answered off the loop, connection.py). Optional TLS and basic auth
(webconfig.py) apply to every path.

Event-driven: one thread runs an epoll loop that owns every connection, so an idle or slow
client costs a file descriptor and a few hundred bytes, not a thread. The loop is this
module's own, not asyncio's: a scrape is a read, a lookup and a write. Connections are
capped (:func:`connection_cap`, below the process's file limit); when the cap is reached a
new connection takes the place of the longest-waiting one that never sent a complete
request (then of the longest-idle keep-alive one), and is closed at once only when every
connection is in the middle of an answer. A plain HTTP request to a TLS port gets a 400.
Time limits: connection.py.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import html
import itertools
import logging
import os
import resource
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

from smartarray_agent.exporter.auth import AttemptLimiter
from smartarray_agent.exporter.connection import HttpConnection
from smartarray_agent.exporter.probe import Prober
from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.request import Request, parse_head, response
from smartarray_agent.exporter.webconfig import WebSecurity

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 512
FD_RESERVE = 128  # descriptors kept for the rest of the agent: CLI pipes, logs, iLO, udev
BACKLOG = 512
SWEEP_S = 0.25  # deadlines are enforced this late at most
RECEIVE_BYTES = 64 * 1024
KNOWN_HEADS = 64  # request heads remembered parsed (a scraper sends the same one each time)
_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>smartarray-agent</title></head>
<body><h1>smartarray-agent</h1>
<p>HP/HPE Smart Array write cache and backup power, for Prometheus. Version {version}.</p>
<ul><li><a href="{link}">{path}</a>: the metrics</li>
<li><a href="-/healthy">/-/healthy</a>: health check</li></ul>
</body></html>
"""
_TEXT = "text/plain; charset=utf-8"
_UNPUBLISHED = b"No recent metrics: is smartarray-agent.service running?\n"


def connection_cap() -> int:
    """MAX_CONNECTIONS, or fewer when the file limit (LimitNOFILE=) leaves less room."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft - FD_RESERVE))


class ExporterServer:
    def __init__(
        self, address: tuple[str, int], body: Callable[[bool], bytes | None],
        security: WebSecurity, *, max_connections: int | None = None,
        telemetry_path: str = "/metrics",
    ) -> None:
        """Listen on ``address`` (OSError when it cannot); serve after :meth:`start`.
        ``body(compressed)`` is the exposition at ``telemetry_path``, or None for a 503
        (``serve`` with nothing recent published)."""
        self.body = body
        self.telemetry_path = telemetry_path
        self.prober: Prober | None = None  # /probe; set (and swapped on a reload) by its owner
        self._security = security
        self.max_connections = max_connections or connection_cap()
        self.page = _PAGE.format(version=version("smartarray-agent"),
                                 path=html.escape(telemetry_path),
                                 link=html.escape(telemetry_path[1:])).encode()
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(address)
            self._socket.listen(BACKLOG)
        except OSError:
            self._socket.close()
            raise
        self._socket.setblocking(False)
        self.server_address = self._socket.getsockname()
        self.checker = ThreadPoolExecutor(1, thread_name_prefix="http-auth")
        self.pending_checks = 0
        self.limiter = AttemptLimiter()
        # What every connection reads into (the loop runs one read at a time): no buffer is
        # allocated per read. A read larger than a request head is cut in several.
        self.received = memoryview(bytearray(RECEIVE_BYTES))
        self._heads: dict[bytes, Request] = {}
        self._answers: dict[tuple[bool, bool, bool], tuple[bytes, int, bytes]] = {}
        # Never-answered connections, then answered (keep-alive) ones; oldest first.
        self._fresh: dict[HttpConnection, None] = {}
        self._kept: dict[HttpConnection, None] = {}
        self._by_fd: dict[int, HttpConnection] = {}
        self._poller = select.epoll()
        self._listening = False
        # Calls from other threads (auth verdicts, stop), and the pipe that wakes the loop.
        self._calls: deque[Callable[[], None]] = deque()
        self._wake_lock = threading.Lock()  # no wake-up write once the pipe is closed
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._poller.register(self._wake_r, select.EPOLLIN)
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_order = itertools.count()
        self._running = False
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        scheme = "https" if self.security.tls is not None else "http"
        return f"{scheme}://{host}:{port}/"

    @property
    def connections(self) -> int:
        return len(self._fresh) + len(self._kept)

    @property
    def security(self) -> WebSecurity:
        """TLS and basic auth, read for every new connection and request."""
        return self._security

    @security.setter
    def security(self, security: WebSecurity) -> None:
        """A reload's: the logins verified so far stay remembered where the user's hash did
        not change."""
        if security.auth is not None and self._security.auth is not None:
            security.auth.adopt(self._security.auth)
        self._security = security

    def start(self) -> None:
        self._listen(True)
        self.call_later(SWEEP_S, self._sweep)
        self._running = True
        self._thread = threading.Thread(target=self._serve, name="http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Close every connection and the port; once is enough, again does nothing."""
        if self._wake_w < 0:  # stopped
            return
        if self._thread is not None:
            self.call_soon_threadsafe(self._shut)
            self._thread.join()
        self._poller.close()
        self._socket.close()
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            self._wake_w = -1
        self.checker.shutdown(wait=False, cancel_futures=True)

    def _shut(self) -> None:
        self._listen(False)
        for connection in [*self._fresh, *self._kept]:
            connection.close("the agent is stopping")
        self._running = False

    # -- the loop ------------------------------------------------------------------------------
    def _serve(self) -> None:
        poll = self._poller.poll
        timers = self._timers
        while self._running:
            timeout = max(0.0, timers[0][0] - time.monotonic()) if timers else -1
            self._dispatch(poll(timeout))
            now = time.monotonic()
            while timers and timers[0][0] <= now:
                _guarded(heapq.heappop(timers)[2])

    def _dispatch(self, ready: list[tuple[int, int]]) -> None:
        for fd, events in ready:
            connection = self._by_fd.get(fd)
            if connection is not None:
                try:
                    connection.ready(events)
                except Exception:
                    log.exception("answering %s failed", connection.peer)
                    connection.close("")
            elif fd == self._socket.fileno():
                _guarded(self._accept)
            elif fd == self._wake_r:
                self._run_calls()

    def call_later(self, delay_s: float, call: Callable[[], None]) -> None:
        """Run ``call`` on the loop in ``delay_s``. The loop's thread only."""
        heapq.heappush(self._timers,
                       (time.monotonic() + delay_s, next(self._timer_order), call))

    def call_soon_threadsafe(self, call: Callable[[], None]) -> None:
        """Run ``call`` on the loop, from any thread; nothing once the server has stopped."""
        with self._wake_lock:
            if self._wake_w < 0:  # stopped
                return
            self._calls.append(call)
            with contextlib.suppress(BlockingIOError):  # full: the loop wakes anyway
                os.write(self._wake_w, b"\0")

    def _run_calls(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_r, 4096):
                pass
        calls = self._calls
        while calls:
            _guarded(calls.popleft())

    def watch(self, connection: HttpConnection, events: int) -> None:
        """Wake ``connection`` for these events from now on."""
        self._poller.modify(connection.fd, events)

    # -- what is served ----------------------------------------------------------------------
    def parse(self, head: bytes) -> Request:
        """:func:`parse_head`, remembered for the last KNOWN_HEADS heads without credentials
        (a password is kept no longer than its request); BadRequest as parse_head."""
        request = self._heads.get(head)
        if request is None:
            request = parse_head(head)
            if "authorization" not in request.headers:
                if len(self._heads) >= KNOWN_HEADS:
                    self._heads.clear()
                self._heads[head] = request
        return request

    def route(self, request: Request) -> bytes:
        """The answer to an authorized request."""
        send_body = request.method != "HEAD"
        keep_alive = request.keep_alive
        path = request.path
        if path == self.telemetry_path:
            compressed = "gzip" in request.headers.get("accept-encoding", "")
            body = self.body(compressed)
            if body is None:
                return response(503, _UNPUBLISHED, _TEXT, send_body=send_body,
                                keep_alive=keep_alive, headers={"Retry-After": "5"})
            return self._metrics(body, compressed, send_body, keep_alive)
        if path == "/":
            return response(200, self.page, "text/html; charset=utf-8", send_body=send_body,
                            keep_alive=keep_alive)
        if path == "/-/healthy":
            return response(200, b"OK\n", _TEXT, send_body=send_body, keep_alive=keep_alive)
        return response(404, b"Not Found\n", _TEXT, send_body=send_body, keep_alive=keep_alive)

    def _metrics(self, body: bytes, compressed: bool, send_body: bool, keep_alive: bool) -> bytes:
        """The whole /metrics answer, made once per exposition, variant and second (the Date
        header): a burst of scrapes costs a lookup each, not a copy of the body each."""
        variant = (compressed, send_body, keep_alive)
        second = int(time.time())
        cached = self._answers.get(variant)
        if cached is not None and cached[0] is body and cached[1] == second:
            return cached[2]
        headers = {"Content-Encoding": "gzip"} if compressed else {}
        headers["Vary"] = "Accept-Encoding"
        answer = response(200, body, CONTENT_TYPE, send_body=send_body, keep_alive=keep_alive,
                          headers=headers)
        self._answers[variant] = (body, second, answer)
        return answer

    # -- the connection table ----------------------------------------------------------------
    def served(self, connection: HttpConnection) -> None:
        """``connection`` was answered: it now waits as a keep-alive connection."""
        self._fresh.pop(connection, None)
        self._kept.pop(connection, None)
        self._kept[connection] = None

    def forget(self, connection: HttpConnection) -> None:
        """``connection`` is closing: no more events, no place in the tables."""
        self._fresh.pop(connection, None)
        self._kept.pop(connection, None)
        if self._by_fd.pop(connection.fd, None) is not None:
            self._poller.unregister(connection.fd)

    def _sweep(self) -> None:
        """Close every connection past its deadline; again in SWEEP_S."""
        now = time.monotonic()
        for connection in [*self._fresh, *self._kept]:
            if connection.deadline <= now:
                connection.close(connection.deadline_reason)
        self.call_later(SWEEP_S, self._sweep)

    def _evict(self) -> bool:
        """Close the longest-waiting connection that is not being answered."""
        for table in (self._fresh, self._kept):
            for connection in table:
                if not connection.checking:
                    connection.close("making room for a new connection")
                    return True
        return False

    # -- accepting -----------------------------------------------------------------------------
    def _listen(self, on: bool) -> None:
        if on != self._listening:
            if on:
                self._poller.register(self._socket.fileno(), select.EPOLLIN)
            else:
                self._poller.unregister(self._socket.fileno())
            self._listening = on

    def _accept(self) -> None:
        for _ in range(64):  # then let the loop serve the others
            try:
                sock, address = self._socket.accept()
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    if self._evict():
                        continue
                    self._pause_accepting(error)
                else:
                    log.debug("accept failed: %s", error)
                return
            if self.connections >= self.max_connections and not self._evict():
                log.debug("%s: every connection is busy; closed", address[0])
                sock.close()
                continue
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as error:  # reset before it was accepted
                log.debug("%s went away: %s", address[0], error)
                sock.close()
                continue
            connection = HttpConnection(self, sock, address[0])
            self._fresh[connection] = None
            self._by_fd[connection.fd] = connection
            self._poller.register(connection.fd, select.EPOLLIN)

    def _pause_accepting(self, error: OSError) -> None:
        log.warning("accept failed (%s), every connection busy: pausing 0.1 s", error.strerror)
        self._listen(False)
        self.call_later(0.1, lambda: self._listen(self._running))


def _guarded(call: Callable[[], None]) -> None:
    """Run ``call``; a bug in it is logged, and the loop goes on serving the others."""
    try:
        call()
    except Exception:
        log.exception("the endpoint's loop caught an error")
