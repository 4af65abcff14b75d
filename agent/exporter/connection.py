"""One client connection of the endpoint: an asyncio protocol on the server's event loop.

Time limits, all on the loop's clock, none per ``recv`` (enforced within SWEEP_S):

- ``REQUEST_DEADLINE_S`` for a whole request head, from the connection's first byte (from
  its accept for a new one, so a TLS handshake counts too);
- ``IDLE_TIMEOUT_S`` for an idle keep-alive connection between requests;
- ``SEND_DEADLINE_S`` for a client that stops reading an answer.

Whoever misses one is closed, with a debug line and no traceback, as is a client that goes
away. Basic-auth checks run on the server's checker thread; the connection waits for the
verdict without holding up anyone else.

A buffered protocol: the transport reads into the server's one receive buffer
(:attr:`ExporterServer.received`), where a plain protocol would have asyncio allocate (and
the kernel map and unmap) 256 KiB for every read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from concurrent.futures import Future
from typing import TYPE_CHECKING

from smartarray_agent.exporter.auth import Credentials, credentials
from smartarray_agent.exporter.request import (
    HEAD_END,
    MAX_HEAD_BYTES,
    BadRequest,
    Request,
    error_response,
    response,
)

if TYPE_CHECKING:
    from smartarray_agent.exporter.http import ExporterServer

log = logging.getLogger("smartarray_agent.exporter.http")

REQUEST_DEADLINE_S = 10.0
IDLE_TIMEOUT_S = 120.0  # Prometheus scrapes at most every few minutes on one connection
SEND_DEADLINE_S = 30.0
MAX_PENDING_CHECKS = 8  # bcrypt checks queued for the checker thread, all clients together
_MAX_BUFFER_BYTES = 4 * MAX_HEAD_BYTES  # pipelined requests waiting for an answer
_TEXT = "text/plain; charset=utf-8"
_UNAUTHORIZED = {"WWW-Authenticate": 'Basic realm="smartarray-agent"'}


class HttpConnection(asyncio.BufferedProtocol):
    def __init__(self, server: ExporterServer, peer: str) -> None:
        self.server = server
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        self.opening: asyncio.Task | None = None  # accept to connection_made (TLS handshake)
        self.checking = False  # a bcrypt check is running for it: not evicted
        self._buffer = bytearray()
        self._paused = False  # the client is not reading what was sent
        self._finished = False  # no more requests are read: closing or closed
        self._aborted = False
        # When the connection is closed unless something happens first, on the loop's clock;
        # the server's sweep (http.py) enforces it. No timer handle per request: re-arming
        # is one assignment.
        self.deadline = math.inf
        self.deadline_reason = ""
        self._arm(REQUEST_DEADLINE_S, "no complete request")

    # -- asyncio callbacks -----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.opening = None

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.server.received

    def buffer_updated(self, nbytes: int) -> None:
        if self._finished:
            return
        if not self._buffer and self.deadline_reason == "idle":
            self._arm(REQUEST_DEADLINE_S, "no complete request")
        self._buffer += self.server.received[:nbytes]
        if len(self._buffer) > _MAX_BUFFER_BYTES:
            self.close("sent more than it waited for")
            return
        self._next()

    def eof_received(self) -> bool:
        return False  # close; a half-closed client has nothing more to ask

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            log.debug("%s went away: %s", self.peer, exc)
        self._finished = self._aborted = True
        self._disarm()
        self.server.forget(self)

    def pause_writing(self) -> None:
        self._paused = True
        self._arm(SEND_DEADLINE_S, "not reading the answer")

    def resume_writing(self) -> None:
        self._paused = False
        self._after_answer()

    # -- closing ---------------------------------------------------------------------------
    def close(self, why: str) -> None:
        """Abort the connection now (deadline, eviction, shutdown)."""
        if self._aborted:
            return
        log.debug("closing the connection of %s: %s", self.peer, why)
        self._finished = self._aborted = True
        self._disarm()
        if self.transport is not None:
            self.transport.abort()
        elif self.opening is not None:
            self.opening.cancel()
        self.server.forget(self)

    def _arm(self, seconds: float, why: str) -> None:
        self.deadline = self.server.loop.time() + seconds
        self.deadline_reason = why

    def _disarm(self) -> None:
        self.deadline = math.inf
        self.deadline_reason = ""

    # -- requests --------------------------------------------------------------------------
    def _next(self) -> None:
        """Answer the request at the head of the buffer, if it is complete and the previous
        answer is out."""
        if self._finished or self.checking or self._paused or self.transport is None:
            return
        end = HEAD_END.search(self._buffer, 0, MAX_HEAD_BYTES + 4)
        if end is None:
            if len(self._buffer) > MAX_HEAD_BYTES:
                self._fail(BadRequest(431, f"request head over {MAX_HEAD_BYTES} bytes"))
            return
        head = bytes(self._buffer[:end.start()])
        del self._buffer[:end.end()]
        self._disarm()
        try:
            request = self.server.parse(head)
        except BadRequest as error:
            self._fail(error)
            return
        self._authorize(request)

    def _authorize(self, request: Request) -> None:
        auth = self.server.security.auth
        given = credentials(request.headers.get("authorization"))
        if auth is None or (given is not None and auth.remembered(given)):
            self._answer(request, self.server.route(request))
        elif given is None:
            self._answer(request, self._unauthorized(request))
        else:
            self._check(request, given)

    def _check(self, request: Request, given: Credentials) -> None:
        server = self.server
        auth = server.security.auth
        assert auth is not None
        loop = server.loop
        wait = server.limiter.take(self.peer, loop.time())
        if wait is None and server.pending_checks >= MAX_PENDING_CHECKS:
            server.limiter.give_back(self.peer, loop.time())
            wait = 1.0
        if wait is not None:
            log.debug("%s: too many login attempts", self.peer)
            self._answer(request, response(
                429, b"Too many failed login attempts\n", _TEXT, send_body=_has_body(request),
                keep_alive=request.keep_alive, headers={"Retry-After": str(int(wait) + 1)}))
            return
        started = loop.time()
        self.checking = True
        server.pending_checks += 1
        future: Future[bool] = server.checker.submit(auth.verify, given)

        def done(verified: bool) -> None:
            server.pending_checks -= 1
            self.checking = False
            if self._finished:
                return
            if verified:
                server.limiter.give_back(self.peer, loop.time())
                self._answer(request, server.route(request))
                return
            log.debug("%s: wrong user or password", self.peer)
            delay = max(0.0, started + auth.failure_floor_s - loop.time())
            self.checking = True  # until the floor is reached, as during the check
            loop.call_later(delay, self._answer_failure, request)

        def finished(checked: Future[bool]) -> None:  # on the checker thread
            verified = (not checked.cancelled() and checked.exception() is None
                        and checked.result())
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
                loop.call_soon_threadsafe(done, verified)

        future.add_done_callback(finished)

    def _answer_failure(self, request: Request) -> None:
        self.checking = False
        if not self._finished:
            self._answer(request, self._unauthorized(request))

    def _unauthorized(self, request: Request) -> bytes:
        return response(401, b"Unauthorized\n", _TEXT, send_body=_has_body(request),
                        keep_alive=request.keep_alive, headers=_UNAUTHORIZED)

    def _answer(self, request: Request, data: bytes) -> None:
        assert self.transport is not None
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s %s %s", self.peer, request.method, request.target,
                      data[9:12].decode("latin-1"))
        self.transport.write(data)
        if not request.keep_alive:
            self._finish()
            return
        self.server.served(self)
        self._after_answer()

    def _after_answer(self) -> None:
        if self._finished or self._paused or self.checking:
            return
        if self._buffer:
            self._arm(REQUEST_DEADLINE_S, "no complete request")
            self._next()
        else:
            self._arm(IDLE_TIMEOUT_S, "idle")

    def _fail(self, error: BadRequest) -> None:
        log.debug("%s: %d %s", self.peer, error.status, error)
        assert self.transport is not None
        self.transport.write(error_response(error))
        self._finish()

    def _finish(self) -> None:
        """Close once what was written is sent, or abort if the client will not take it."""
        assert self.transport is not None
        self._finished = True
        self._arm(SEND_DEADLINE_S, "not reading the answer")
        self.transport.close()


def _has_body(request: Request) -> bool:
    return request.method != "HEAD"
