"""The HTTP endpoint: ``/metrics`` (the last exposition, never a vendor CLI call; gzip when
the scraper accepts it, as Prometheus does), ``/`` (a small page linking to it) and
``/-/healthy``. Optional TLS and basic auth (webconfig.py) apply to every path.

Event-driven: one thread runs an asyncio loop that owns every connection, so an idle or
slow client costs a file descriptor and a few hundred bytes, not a thread. Connections are
capped (:func:`connection_cap`, below the process's file limit); when the cap is reached a
new connection takes the place of the longest-waiting one that never sent a complete
request (then of the longest-idle keep-alive one), and is closed at once only when every
connection is in the middle of an answer. A plain HTTP request to a TLS port gets a 400.
Time limits: connection.py.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

from smartarray_agent.exporter.auth import AttemptLimiter
from smartarray_agent.exporter.connection import REQUEST_DEADLINE_S, HttpConnection
from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.request import (
    HEAD_END,
    MAX_HEAD_BYTES,
    BadRequest,
    Request,
    error_response,
    parse_head,
    response,
)
from smartarray_agent.exporter.webconfig import WebSecurity

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 512
FD_RESERVE = 128  # descriptors kept for the rest of the agent: CLI pipes, logs, iLO, udev
BACKLOG = 512
SWEEP_S = 0.25  # deadlines are enforced this late at most
RECEIVE_BYTES = 64 * 1024
KNOWN_HEADS = 64  # request heads remembered parsed (a scraper sends the same one each time)
_TLS_HANDSHAKE = 0x16  # the first byte of a TLS ClientHello record
_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>smartarray-agent</title></head>
<body><h1>smartarray-agent</h1>
<p>HP/HPE Smart Array write cache and backup power, for Prometheus. Version {version}.</p>
<ul><li><a href="metrics">/metrics</a>: the metrics</li>
<li><a href="-/healthy">/-/healthy</a>: health check</li></ul>
</body></html>
"""
_TEXT = "text/plain; charset=utf-8"
_UNPUBLISHED = b"No recent metrics: is smartarray-agent.service running?\n"
_PLAIN_TO_TLS = BadRequest(400, "this port speaks HTTPS: use https://")


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
    ) -> None:
        """Listen on ``address`` (OSError when it cannot); serve after :meth:`start`.
        ``body(compressed)`` is the exposition, or None for a 503 (``serve`` with nothing
        recent published)."""
        self.body = body
        self.security = security  # replaced on reload; read for every new request
        self.max_connections = max_connections or connection_cap()
        self.page = _PAGE.format(version=version("smartarray-agent")).encode()
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
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_quiet)
        self.checker = ThreadPoolExecutor(1, thread_name_prefix="http-auth")
        self.pending_checks = 0
        self.limiter = AttemptLimiter()
        # Never-answered connections, then answered (keep-alive) ones; oldest first.
        self._fresh: dict[HttpConnection, None] = {}
        self._kept: dict[HttpConnection, None] = {}
        self._thread: threading.Thread | None = None
        self._answers: dict[tuple[bool, bool, bool], tuple[bytes, int, bytes]] = {}
        # What every connection reads into (the loop runs one read at a time): no buffer is
        # allocated per read. A read larger than a request head is cut in several.
        self.received = memoryview(bytearray(RECEIVE_BYTES))
        self._heads: dict[bytes, Request] = {}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        scheme = "https" if self.security.tls is not None else "http"
        return f"{scheme}://{host}:{port}/"

    @property
    def connections(self) -> int:
        return len(self._fresh) + len(self._kept)

    def start(self) -> None:
        self.loop.add_reader(self._socket, self._accept)
        self.loop.call_soon(self._sweep)
        self._thread = threading.Thread(target=self.loop.run_forever, name="http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self._shut)
            self._thread.join()
            self.loop.call_soon(self.loop.stop)
            self.loop.run_forever()  # one more turn: the aborted connections release their sockets
        self.loop.close()
        self._socket.close()
        self.checker.shutdown(wait=False, cancel_futures=True)

    def _shut(self) -> None:
        self.loop.remove_reader(self._socket)
        for connection in [*self._fresh, *self._kept]:
            connection.close("the agent is stopping")
        self.loop.stop()

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
        if path == "/metrics":
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
        self._fresh.pop(connection, None)
        self._kept.pop(connection, None)

    def _sweep(self) -> None:
        """Close every connection past its deadline; again in SWEEP_S."""
        now = self.loop.time()
        for connection in [*self._fresh, *self._kept]:
            if connection.deadline <= now:
                connection.close(connection.deadline_reason)
        self.loop.call_later(SWEEP_S, self._sweep)

    def _evict(self) -> bool:
        """Close the longest-waiting connection that is not being answered."""
        for table in (self._fresh, self._kept):
            for connection in table:
                if not connection.checking:
                    connection.close("making room for a new connection")
                    return True
        return False

    # -- accepting -----------------------------------------------------------------------------
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
            self._open(sock, address[0])

    def _pause_accepting(self, error: OSError) -> None:
        log.warning("accept failed (%s), every connection busy: pausing 0.1 s", error.strerror)
        self.loop.remove_reader(self._socket)
        self.loop.call_later(0.1, self.loop.add_reader, self._socket, self._accept)

    def _open(self, sock: socket.socket, peer: str) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = HttpConnection(self, peer)
        self._fresh[connection] = None
        connection.opening = self.loop.create_task(self._handshake(connection, sock))

    async def _handshake(self, connection: HttpConnection, sock: socket.socket) -> None:
        tls = self.security.tls
        try:
            if tls is not None and not await self._speaks_tls(sock, connection.peer):
                sock.close()
                connection.opening = None  # this task ends here: nothing to cancel
                connection.close("plain HTTP on the TLS port")
                return
        except BaseException:
            sock.close()  # cancelled (deadline, eviction) before asyncio owned the socket
            raise
        try:
            await self.loop.connect_accepted_socket(
                lambda: connection, sock, ssl=tls,
                ssl_handshake_timeout=REQUEST_DEADLINE_S if tls is not None else None)
        except OSError as error:  # ssl.SSLError too
            log.debug("TLS handshake with %s failed: %s", connection.peer, error)
            connection.opening = None
            connection.close("TLS handshake failed")

    async def _speaks_tls(self, sock: socket.socket, peer: str) -> bool:
        """Whether the client starts a TLS handshake; a plain HTTP client is told so with
        a 400 once its request head is in."""
        await self._readable(sock)
        first = sock.recv(1, socket.MSG_PEEK)
        if not first or first[0] == _TLS_HANDSHAKE:
            return bool(first)
        received = b""
        while HEAD_END.search(received) is None and len(received) <= MAX_HEAD_BYTES:
            try:
                chunk = sock.recv(MAX_HEAD_BYTES)
            except BlockingIOError:
                await self._readable(sock)
                continue
            if not chunk:
                break
            received += chunk
        log.debug("%s: plain HTTP on the TLS port", peer)
        try:
            sock.send(error_response(_PLAIN_TO_TLS))
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        return False

    async def _readable(self, sock: socket.socket) -> None:
        ready: asyncio.Future[None] = self.loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        self.loop.add_reader(sock, wake)
        try:
            await ready
        finally:
            self.loop.remove_reader(sock)


def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """A client that goes away mid-answer is normal: one debug line, no traceback."""
    error = context.get("exception")
    log.debug("%s%s", context.get("message"), f": {error!r}" if error else "")
