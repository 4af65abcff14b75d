"""The HTTP endpoint of ``run`` and ``serve``: ``/metrics`` (the last exposition, gzip when the
scraper accepts it), ``/``, ``/-/healthy`` and ``/probe`` (agent/probe/), behind optional TLS
and basic auth (webconfig.py, auth.py), on aiohttp's low-level server in a thread of its own.

aiohttp, like asyncio's create_server, takes every connection the kernel hands it, with no
bound in all or per client and no deadline for a first request, and fixes a listener's TLS
when it is made. So the endpoint accepts, refuses or makes room (connections.py) before
aiohttp sees a connection, and hands each to aiohttp with the TLS of the moment
(``loop.connect_accepted_socket``). Time limits (docs/privileges.md): below.
"""

from __future__ import annotations

import asyncio
import html
import logging
import resource
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from smartarray_agent.exporter.auth import AttemptLimiter, client_key, credentials
from smartarray_agent.exporter.connections import Connection, Connections
from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.webconfig import WebSecurity
from smartarray_agent.probe.prober import PATH as PROBE_PATH
from smartarray_agent.probe.prober import SCRAPE_TIMEOUT_HEADER, Prober

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 4096
PER_CLIENT = 1024  # /probe of ~6,000 iLOs from one Prometheus (docs/privileges.md)
FD_RESERVE = 128  # descriptors kept for the rest of the agent: CLI pipes, logs, iLO, udev
BACKLOG = 512
HANDSHAKE_TIMEOUT_S = 10.0
REQUEST_DEADLINE_S = 10.0  # from the accept (after the handshake) to a whole first request
IDLE_TIMEOUT_S = 120.0  # Prometheus scrapes at most every few minutes on one connection
SEND_DEADLINE_S = 30.0
MAX_PENDING_CHECKS = 8  # bcrypt checks waiting for the checker thread, all clients together
_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>smartarray-agent</title></head><body>
<h1>smartarray-agent</h1><p>HP/HPE Smart Array write cache and backup power, for Prometheus.
Version {version}.</p><ul><li><a href="{link}">{path}</a>: the metrics</li>
<li><a href="-/healthy">/-/healthy</a>: health check</li></ul></body></html>
"""
_UNAUTHORIZED = {"WWW-Authenticate": 'Basic realm="smartarray-agent"'}


def connection_cap() -> int:
    """MAX_CONNECTIONS, or fewer when the file limit (LimitNOFILE=) leaves less room."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else soft - FD_RESERVE
    return max(16, min(MAX_CONNECTIONS, room))


def _malformed_is_one_debug_line(record: logging.LogRecord) -> bool:
    """aiohttp logs a malformed request as an error with its traceback; it is a client's
    doing, and a flood of them must not flood the log: one debug line instead."""
    error = record.exc_info[1] if record.exc_info else None
    if not isinstance(error, HttpProcessingError):
        return True
    log.debug("malformed request: %s", str(error).replace("\n", " "))
    return False


log.addFilter(_malformed_is_one_debug_line)  # aiohttp logs to ``log`` (below)


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
        self.prober: Prober | None = None  # /probe; set (and swapped) by its owner
        self._security = security
        self.table = Connections(max_connections or connection_cap(), PER_CLIENT)
        self.page = _PAGE.format(version=version("smartarray-agent"),
                                 path=html.escape(telemetry_path),
                                 link=html.escape(telemetry_path[1:])).encode()
        v6 = ":" in address[0]  # "::" takes IPv4 too, as Linux does by default
        self._socket = socket.create_server(address, backlog=BACKLOG, dualstack_ipv6=v6,
                                            family=socket.AF_INET6 if v6 else socket.AF_INET)
        self._socket.setblocking(False)
        self.server_address = self._socket.getsockname()
        self.checker = ThreadPoolExecutor(1, thread_name_prefix="http-auth")
        self.limiter = AttemptLimiter()
        self._checks = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="http", daemon=True)
        self._accepting: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"{'http' if self.security.tls is None else 'https'}://{host}:{port}/"

    @property
    def security(self) -> WebSecurity:
        return self._security

    @security.setter
    def security(self, security: WebSecurity) -> None:
        """A reload: auth applies from the next request (verified logins kept where the
        user's hash is), TLS from the next connection."""
        if security.auth is not None and self._security.auth is not None:
            security.auth.adopt(self._security.auth)
        self._security = security

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result()

    def stop(self) -> None:
        """Close every connection and the port; once is enough, again does nothing."""
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()
        self._socket.close()
        self.checker.shutdown(wait=False, cancel_futures=True)

    async def _serve(self) -> None:
        self._http = web.Server(self._handle, keepalive_timeout=IDLE_TIMEOUT_S,
                                access_log=None, logger=log, max_headers=100)
        self._accepting = asyncio.create_task(self._accept())

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:  # without a pause while connections wait, as asyncio's own server
            try:
                sock, peer = await loop.sock_accept(self._socket)
            except OSError as error:  # out of descriptors: wait, as asyncio's own server does
                log.debug("cannot accept: %s", error)
                await asyncio.sleep(1.0)
                continue
            conn = Connection(self._http(), client_key(peer[0]), self.table, REQUEST_DEADLINE_S)
            victim = self.table.admit(conn)
            if victim is conn:
                log.debug("%s: every connection is busy; closed", peer[0])
                sock.close()
                continue
            if victim is not None:
                log.debug("%s: making room for a new connection", peer[0])
                victim.close()
            conn.handover = asyncio.create_task(self._hand_over(conn, sock))

    async def _hand_over(self, conn: Connection, sock: socket.socket) -> None:
        """``sock`` to aiohttp's protocol through ``conn``, after the TLS handshake if any."""
        tls = self._security.tls
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: conn, sock, ssl=tls,
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S if tls is not None else None)
        except (OSError, asyncio.CancelledError) as error:  # a failed or stalled handshake
            log.debug("%s: no connection: %r", conn.client, error)
            self.table.drop(conn)
            sock.close()

    async def _close(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
        handshakes = [conn.handover for conn in self.table
                      if conn.handover is not None and not conn.handover.done()]
        for task in handshakes:
            task.cancel()
        await asyncio.gather(*handshakes, return_exceptions=True)
        await self._http.shutdown(1.0)

    # -- answering ---------------------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        http = request.protocol
        self.table.begin(http)
        try:
            response = await self._answer(request)
            response.headers["Server"] = "smartarray-agent"  # not aiohttp's, nor its version
            async with asyncio.timeout(SEND_DEADLINE_S):
                await response.prepare(request)
                await response.write_eof()
        except TimeoutError:
            log.debug("closing the connection of %s: not reading the answer", request.remote)
            if request.transport is not None:
                request.transport.abort()  # a plain close would wait for the client to read
        except ConnectionError as error:  # aiohttp, finishing, finds it gone too: quietly
            log.debug("%s went away: %s", request.remote, error)
        finally:
            self.table.end(http)
        return response

    async def _answer(self, request: web.BaseRequest) -> web.Response:
        if request.method not in ("GET", "HEAD"):
            return web.Response(status=405, text=f"{request.method} is not served: use GET or "
                                "HEAD\n", headers={"Allow": "GET, HEAD"})
        refused = await self._refusal(request)
        if refused is not None:
            return refused
        path = request.path
        if path == self.telemetry_path:
            return self._metrics(request)
        if path == PROBE_PATH and (prober := self.prober) is not None:
            answer = await prober.respond(request.query_string,
                                          request.headers.get(SCRAPE_TIMEOUT_HEADER))
            if answer.status != 200:
                return web.Response(status=answer.status, text=answer.body.decode())
            return web.Response(body=answer.body, headers={"Content-Type": CONTENT_TYPE})
        if path == "/":
            return web.Response(body=self.page, content_type="text/html", charset="utf-8")
        if path == "/-/healthy":
            return web.Response(text="OK\n")
        return web.Response(status=404, text="Not Found\n")

    def _metrics(self, request: web.BaseRequest) -> web.Response:
        compressed = "gzip" in request.headers.get("Accept-Encoding", "")
        body = self.body(compressed)
        if body is None:
            return web.Response(status=503, headers={"Retry-After": "5"},
                                text="No recent metrics: is smartarray-agent.service running?\n")
        encoding = {"Content-Encoding": "gzip"} if compressed else {}
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE,
                                                "Vary": "Accept-Encoding", **encoding})

    async def _refusal(self, request: web.BaseRequest) -> web.Response | None:
        """None when ``request`` may be answered, else the 401 or 429. A login not verified
        before takes a token of the attempt limiter (auth.py), then a bcrypt check on the
        checker thread; a failure is answered no sooner than the auth's floor."""
        auth = self._security.auth
        given = credentials(request.headers.get("Authorization"))
        if auth is None or (given is not None and auth.remembered(given)):
            return None
        unauthorized = web.Response(status=401, text="Unauthorized\n", headers=_UNAUTHORIZED)
        if given is None:
            return unauthorized
        peer, limiter = request.remote or "", self.limiter
        wait = limiter.take(peer, time.monotonic())
        if wait is None and self._checks >= MAX_PENDING_CHECKS and not limiter.known(peer):
            limiter.refund(peer, time.monotonic())
            wait = 1.0
        if wait is not None:
            log.debug("%s: too many login attempts", peer)
            return web.Response(status=429, text="Too many failed login attempts\n",
                                headers={"Retry-After": str(int(wait) + 1)})
        started = time.monotonic()
        self._checks += 1
        try:
            verified = await asyncio.get_running_loop().run_in_executor(
                self.checker, auth.verify, given)
        finally:
            self._checks -= 1
        if verified:
            limiter.verified(peer, time.monotonic())
            return None
        log.debug("%s: wrong user or password", peer)
        await asyncio.sleep(max(0.0, started + auth.failure_floor_s - time.monotonic()))
        return unauthorized
