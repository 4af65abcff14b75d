"""One client connection of the endpoint: a non-blocking socket (TLS or not) driven by the
server's epoll loop (http.py), which calls :meth:`HttpConnection.ready` when it can read or
write.

Time limits, all on the monotonic clock, none per ``recv`` (enforced within SWEEP_S):

- ``REQUEST_DEADLINE_S`` for a whole request head, from the connection's first byte (from
  its accept for a new one, so a TLS handshake counts too);
- ``IDLE_TIMEOUT_S`` for an idle keep-alive connection between requests;
- ``SEND_DEADLINE_S`` for a client that stops reading an answer.

Whoever misses one is closed, with a debug line and no traceback, as is a client that goes
away. Basic-auth checks run on the server's checker thread, and ``/probe`` reads an iLO on
the prober's workers (exporter/probe.py); the connection waits for the verdict or the probe's
answer (at most its timeout) without holding up anyone else.

Every read lands in the server's one receive buffer (:attr:`ExporterServer.received`): no
buffer is allocated per read. An answer is written at once; only what the socket does not
take is kept, and the connection then waits to be writable before it reads another request.
"""

from __future__ import annotations

import contextlib
import logging
import math
import ssl
import time
from concurrent.futures import Future
from select import EPOLLIN, EPOLLOUT
from socket import MSG_PEEK, socket
from typing import TYPE_CHECKING

from smartarray_agent.exporter import probe
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
_TLS_HANDSHAKE = 0x16  # the first byte of a TLS ClientHello record
_PLAIN_TO_TLS = BadRequest(400, "this port speaks HTTPS: use https://")
# What a non-blocking read or write raises when it must wait (TLS: for the other direction
# too, as a handshake or a key update can make it).
_WAIT = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)

# What the connection does with the next readable event.
_SNIFF = 0  # TLS port, nothing received yet: TLS or plain HTTP?
_HANDSHAKE = 1
_HTTP = 2


class HttpConnection:
    def __init__(self, server: ExporterServer, sock: socket, peer: str) -> None:
        self.server = server
        self.sock = sock
        self.fd = sock.fileno()  # stays the same when TLS wraps the socket
        self.peer = peer
        self.checking = False  # a bcrypt check or a probe is running for it: not evicted
        self._stage = _SNIFF if server.security.tls is not None else _HTTP
        self._plain_on_tls = False
        self._buffer = bytearray()
        self._unsent: memoryview | None = None  # the rest of an answer the socket did not take
        self._finished = False  # no more requests are read: closing or closed
        self._closed = False
        # When the connection is closed unless something happens first; the server's sweep
        # (http.py) enforces it. No timer per request: re-arming is one assignment.
        self.deadline = math.inf
        self.deadline_reason = ""
        self._arm(REQUEST_DEADLINE_S, "no complete request")

    # -- events from the server's loop -----------------------------------------------------
    def ready(self, events: int) -> None:
        if self._stage == _HTTP:
            if self._unsent is not None and events & ~EPOLLIN:  # writable, or an error
                self._flush()
            if not self._finished and events & ~EPOLLOUT:
                self._read()
        elif self._stage == _HANDSHAKE:
            self._handshake()
        else:
            self._sniff()

    def _sniff(self) -> None:
        """The first byte on a TLS port: a ClientHello starts the handshake; anything else
        is plain HTTP, told so with a 400 once its request head is in."""
        try:
            first = self.sock.recv(1, MSG_PEEK)
        except _WAIT:
            return
        except OSError as error:
            self._lost(error)
            return
        if not first:
            self._lost(None)
            return
        tls = self.server.security.tls  # read again: a reload may have turned TLS off
        if tls is None or first[0] != _TLS_HANDSHAKE:
            self._plain_on_tls = tls is not None
            if self._plain_on_tls:
                log.debug("%s: plain HTTP on the TLS port", self.peer)
            self._stage = _HTTP
            self._read()
            return
        self.sock = tls.wrap_socket(self.sock, server_side=True, do_handshake_on_connect=False)
        self._stage = _HANDSHAKE
        self._handshake()

    def _handshake(self) -> None:
        sock = self.sock
        assert isinstance(sock, ssl.SSLSocket)
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            self.server.watch(self, EPOLLIN)
            return
        except ssl.SSLWantWriteError:
            self.server.watch(self, EPOLLOUT)
            return
        except OSError as error:  # ssl.SSLError too
            log.debug("TLS handshake with %s failed: %s", self.peer, error)
            self.close("TLS handshake failed")
            return
        self._stage = _HTTP
        self.server.watch(self, EPOLLIN)
        self._read()  # the request may already be decrypted, where epoll cannot see it

    def _read(self) -> None:
        received = self.server.received
        sock = self.sock
        while True:
            try:
                count = sock.recv_into(received)
            except _WAIT:
                return
            except OSError as error:
                self._lost(error)
                return
            if not count:
                self._lost(None)
                return
            if self._finished:
                return
            buffer = self._buffer
            buffer += received[:count]
            if len(buffer) > _MAX_BUFFER_BYTES:
                self.close("sent more than it waited for")
                return
            if self.deadline_reason == "idle":
                self._arm(REQUEST_DEADLINE_S, "no complete request")
            self._next()
            # TLS: more of what was received may wait decrypted, where epoll cannot see it
            if self._finished or not isinstance(sock, ssl.SSLSocket) or not sock.pending():
                return

    def _lost(self, error: OSError | None) -> None:
        """The client closed its side (``error`` None) or went away."""
        if error is not None:
            log.debug("%s went away: %s", self.peer, error)
            self.close("")
        elif self._unsent is not None:
            self._finish()  # a half-closed client still gets the answer it asked for
        else:
            self.close("")

    # -- closing ---------------------------------------------------------------------------
    def close(self, why: str) -> None:
        """Close the connection now (deadline, eviction, shutdown, a client gone)."""
        if self._closed:
            return
        if why:
            log.debug("closing the connection of %s: %s", self.peer, why)
        self._finished = self._closed = True
        self._disarm()
        self.server.forget(self)
        self.sock.close()

    def _finish(self) -> None:
        """Close once what was written is sent, or when the client will not take it."""
        self._finished = True
        if self._unsent is None:
            if isinstance(self.sock, ssl.SSLSocket):
                with contextlib.suppress(OSError, ValueError):
                    self.sock.unwrap()  # close_notify; the client's own is not awaited
            self.close("")
        else:
            self.server.watch(self, EPOLLOUT)  # nothing more is read: an EOF is not news
            self._arm(SEND_DEADLINE_S, "not reading the answer")

    def _arm(self, seconds: float, why: str) -> None:
        self.deadline = time.monotonic() + seconds
        self.deadline_reason = why

    def _disarm(self) -> None:
        self.deadline = math.inf
        self.deadline_reason = ""

    # -- requests --------------------------------------------------------------------------
    def _next(self) -> None:
        """Answer the complete requests at the head of the buffer in turn, while each
        previous answer went out whole. A loop, not a call per request: a client may
        pipeline thousands of small ones in one write."""
        while not (self._finished or self.checking or self._unsent is not None):
            end = HEAD_END.search(self._buffer, 0, MAX_HEAD_BYTES + 4)
            if end is None:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    self._fail(_PLAIN_TO_TLS if self._plain_on_tls else
                               BadRequest(431, f"request head over {MAX_HEAD_BYTES} bytes"))
                return
            if self._plain_on_tls:
                self._fail(_PLAIN_TO_TLS)
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
            self._route(request)
        elif given is None:
            self._answer(request, self._unauthorized(request))
        else:
            self._check(request, given)

    def _check(self, request: Request, given: Credentials) -> None:
        server = self.server
        auth = server.security.auth
        assert auth is not None
        wait = server.limiter.take(self.peer, time.monotonic())
        if (wait is None and server.pending_checks >= MAX_PENDING_CHECKS
                and not server.limiter.known(self.peer)):
            server.limiter.give_back(self.peer, time.monotonic())
            wait = 1.0
        if wait is not None:
            log.debug("%s: too many login attempts", self.peer)
            self._answer(request, response(
                429, b"Too many failed login attempts\n", _TEXT, send_body=_has_body(request),
                keep_alive=request.keep_alive, headers={"Retry-After": str(int(wait) + 1)}))
            return
        started = time.monotonic()
        self.checking = True
        server.pending_checks += 1
        future: Future[bool] = server.checker.submit(auth.verify, given)

        def done(verified: bool) -> None:  # on the server's loop
            server.pending_checks -= 1
            self.checking = False
            if self._finished:
                return
            if verified:
                server.limiter.give_back(self.peer, time.monotonic())
                self._route(request)
                self._next()
                return
            log.debug("%s: wrong user or password", self.peer)
            delay = max(0.0, started + auth.failure_floor_s - time.monotonic())
            self.checking = True  # until the floor is reached, as during the check
            server.call_later(delay, lambda: self._answer_failure(request))

        def finished(checked: Future[bool]) -> None:  # on the checker thread
            verified = (not checked.cancelled() and checked.exception() is None
                        and checked.result())
            server.call_soon_threadsafe(lambda: done(verified))

        future.add_done_callback(finished)

    def _route(self, request: Request) -> None:
        """Answer an authorized request: now, or when its probe ends."""
        server = self.server
        prober = server.prober
        if prober is None or request.path != probe.PATH:
            self._answer(request, server.route(request))
            return
        outcome = prober.probe(request)
        if isinstance(outcome, probe.ProbeAnswer):
            self._answer(request, _probe_response(request, outcome))
        else:
            self._await_probe(request, outcome)

    def _await_probe(self, request: Request, pending: probe.Pending) -> None:
        """Answer with the probe's result, or its late answer once its time is up."""
        server = self.server
        self.checking = True
        answered = False

        def settle(answer: probe.ProbeAnswer) -> None:  # on the server's loop
            nonlocal answered
            if answered:
                return
            answered = True
            self.checking = False
            if not self._finished:
                self._answer(request, _probe_response(request, answer))
                self._next()

        def finished(result: Future[probe.ProbeAnswer]) -> None:  # on a probe worker
            if not result.cancelled():  # cancelled: the agent stops; the timer answers
                answer = result.result()
                server.call_soon_threadsafe(lambda: settle(answer))

        server.call_later(pending.timeout_s, lambda: settle(pending.late))
        pending.result.add_done_callback(finished)

    def _answer_failure(self, request: Request) -> None:
        self.checking = False
        if not self._finished:
            self._answer(request, self._unauthorized(request))
            self._next()

    def _unauthorized(self, request: Request) -> bytes:
        return response(401, b"Unauthorized\n", _TEXT, send_body=_has_body(request),
                        keep_alive=request.keep_alive, headers=_UNAUTHORIZED)

    def _answer(self, request: Request, data: bytes) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s %s %s", self.peer, request.method, request.target,
                      data[9:12].decode("latin-1"))
        if not self._send(data):
            return
        if not request.keep_alive:
            self._finish()
            return
        self.server.served(self)
        if self._unsent is None:
            self._after_answer()

    def _after_answer(self) -> None:
        """Start the clock for the next request; whoever called answers it (``_next``)."""
        if self._finished or self.checking:
            return
        if self._buffer:
            self._arm(REQUEST_DEADLINE_S, "no complete request")
        else:
            self._arm(IDLE_TIMEOUT_S, "idle")

    def _fail(self, error: BadRequest) -> None:
        log.debug("%s: %d %s", self.peer, error.status, error)
        if self._send(error_response(error)):
            self._finish()

    # -- writing ---------------------------------------------------------------------------
    def _write(self, data: bytes | memoryview) -> int | None:
        """What the socket took of ``data`` (0: it must wait); None when the client is
        gone (the connection is then closed)."""
        try:
            return self.sock.send(data)
        except _WAIT:
            return 0
        except OSError as error:
            self._lost(error)
            return None

    def _send(self, data: bytes) -> bool:
        """Write ``data``; what the socket does not take waits for it to be writable.
        False when the client is gone."""
        sent = self._write(data)
        if sent is None:
            return False
        if sent < len(data):
            self._unsent = memoryview(data)[sent:]
            self.server.watch(self, EPOLLIN | EPOLLOUT)
            self._arm(SEND_DEADLINE_S, "not reading the answer")
        return True

    def _flush(self) -> None:
        unsent = self._unsent
        assert unsent is not None
        sent = self._write(unsent)
        if not sent:  # the socket must wait, or the client is gone
            return
        if sent < len(unsent):
            self._unsent = unsent[sent:]
            return
        self._unsent = None
        if self._finished:
            self._finish()
            return
        self.server.watch(self, EPOLLIN)
        self._after_answer()
        self._next()


def _probe_response(request: Request, answer: probe.ProbeAnswer) -> bytes:
    return response(answer.status, answer.body, answer.content_type,
                    send_body=_has_body(request), keep_alive=request.keep_alive)


def _has_body(request: Request) -> bool:
    return request.method != "HEAD"
