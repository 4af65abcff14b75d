"""The HTTP endpoint, on aiohttp's server (its llhttp parser, asyncio, TLS with a handshake
timeout), in a thread of its own, for ``run`` and ``serve`` alike: ``/metrics`` (the last
exposition, never a vendor CLI call; gzip when the scraper accepts it), ``/`` (a page linking
to it), ``/-/healthy``, and ``/probe`` when a prober is set (agent/probe/). Optional TLS and
basic auth (webconfig.py, auth.py) apply to every path.

Limits (docs/privileges.md): a TLS handshake, a connection's first request, an idle
keep-alive connection and a client that stops reading an answer each have their time (below);
connections.py keeps at most :func:`connection_cap` connections.
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
from aiohttp.web_protocol import RequestHandler

from smartarray_agent.exporter.auth import AttemptLimiter, credentials
from smartarray_agent.exporter.connections import Connections
from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.webconfig import WebSecurity
from smartarray_agent.probe.prober import PATH as PROBE_PATH
from smartarray_agent.probe.prober import SCRAPE_TIMEOUT_HEADER, Prober

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 4096
PER_CLIENT = 256
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


class _Protocols(web.Server):
    """aiohttp's server, each connection counted in (or refused by) ``table``."""

    def __init__(self, handler: Callable[[web.BaseRequest], object],
                 table: Connections[RequestHandler]) -> None:
        super().__init__(handler, keepalive_timeout=IDLE_TIMEOUT_S,  # type: ignore[arg-type]
                         access_log=None, logger=log, max_headers=100)
        self.table = table

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        peer = transport.get_extra_info("peername")
        victim = self.table.admit(handler, peer[0] if peer else "")
        if victim is not None:
            log.debug("%s: %s", peer and peer[0], "making room for a new connection"
                      if victim is not handler else "every connection is busy; closed")
            _abort(victim)
        asyncio.get_running_loop().call_later(REQUEST_DEADLINE_S, self._deadline, handler)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        self.table.drop(handler)

    def _deadline(self, handler: RequestHandler) -> None:
        if self.table.unused(handler):
            log.debug("closing a connection: no complete request")
            _abort(handler)


def _abort(handler: RequestHandler) -> None:
    """Close now, dropping what is unsent (a plain close waits for the client to read it)."""
    if handler.transport is not None:
        handler.transport.abort()


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
        self.table: Connections[RequestHandler] = Connections(
            max_connections or connection_cap(), PER_CLIENT)
        self.page = _PAGE.format(version=version("smartarray-agent"),
                                 path=html.escape(telemetry_path),
                                 link=html.escape(telemetry_path[1:])).encode()
        v6 = ":" in address[0]  # "::" takes IPv4 too, as Linux does by default
        self._socket = socket.create_server(address, backlog=BACKLOG, dualstack_ipv6=v6,
                                            family=socket.AF_INET6 if v6 else socket.AF_INET)
        self.server_address = self._socket.getsockname()
        self.checker = ThreadPoolExecutor(1, thread_name_prefix="http-auth")
        self.limiter = AttemptLimiter()
        self._checks = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._protocols: _Protocols | None = None
        self._listener: asyncio.Server | None = None

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
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result()

    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="http", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result()

    def stop(self) -> None:
        """Close every connection and the port; once is enough, again does nothing."""
        loop, self._loop = self._loop, None
        if loop is not None and self._thread is not None:
            asyncio.run_coroutine_threadsafe(self._close(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join()
            loop.close()
        self._socket.close()
        self.checker.shutdown(wait=False, cancel_futures=True)

    async def _listen(self) -> None:
        """Accept on a copy of the socket, with TLS as the security says. A reload opens another,
        then closes the one before once it accepts no more and what it accepted has started
        (asyncio refuses a connection of a closed listener); the port stays open."""
        if self._protocols is None:  # the first: aiohttp's server is made on its loop
            self._protocols = _Protocols(self._handle, self.table)
        loop = asyncio.get_running_loop()
        before, tls = self._listener, self._security.tls
        self._listener = await loop.create_server(
            self._protocols, sock=self._socket.dup(), backlog=BACKLOG, ssl=tls,
            ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S if tls is not None else None)
        if before is not None:
            for sock in before.sockets:
                loop.remove_reader(sock.fileno())
            for _ in range(2):
                await asyncio.sleep(0)
            before.close()

    async def _close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._protocols is not None:
            await self._protocols.shutdown(1.0)

    # -- answering ---------------------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        conn = request.protocol
        self.table.begin(conn)
        try:
            response = await self._answer(request)
            response.headers["Server"] = "smartarray-agent"  # not aiohttp's, nor its version
            async with asyncio.timeout(SEND_DEADLINE_S):
                await response.prepare(request)
                await response.write_eof()
        except TimeoutError:
            log.debug("closing the connection of %s: not reading the answer", request.remote)
            _abort(conn)
        except ConnectionError as error:  # aiohttp, finishing, finds it gone too: quietly
            log.debug("%s went away: %s", request.remote, error)
        finally:
            self.table.end(conn)
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
            limiter.give_back(peer, time.monotonic())
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
            limiter.give_back(peer, time.monotonic())
            return None
        log.debug("%s: wrong user or password", peer)
        await asyncio.sleep(max(0.0, started + auth.failure_floor_s - time.monotonic()))
        return unauthorized
