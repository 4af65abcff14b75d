"""The HTTP servers weighed for the endpoint (issues #26, #38), each serving the same page
the same way, for ``http_servers.py`` to attack: ``python http_candidates.py NAME PORT``.

Every candidate listens on 127.0.0.1:PORT with TLS (tests/tls) and basic auth. ``agent`` is
the endpoint itself (aiohttp's server as agent/exporter/server.py runs it, with its auth and
connection caps). The others get the agent's own gate (``smartarray_agent.exporter.auth``:
remembered logins, the attempt limiter, the bcrypt check, the floor under a failed login), put
in front of each server the way that server takes application code, and each is tuned as its
own documentation advises (the settings are in each function and in docs/benchmarks.md), so
that what differs is the server: its parsing, its concurrency and its time limits. Each logs
what it logs by default, at its default level: the log is judged too."""

from __future__ import annotations

import os
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from smartarray_agent.exporter.auth import AttemptLimiter, BasicAuth, credentials

TLS = Path(__file__).resolve().parent.parent / "tests" / "tls"
CERT, KEY = TLS / "server.crt", TLS / "server.key"
BODY = b"smartarray_up 1\n" * 1000
USER, PASSWORD = "prometheus", b"scrape-me"
# PASSWORD's hash at bcrypt's default cost, the same for every candidate (a process each).
HASH = "$2b$12$0aqKRVMCsdtMYvNpOGQD4.r305YJHsjCe8oYBIxWT5QuRkncCcq9y"

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class Gate:
    """The agent's auth rules as a blocking call: 200, 401 or 429 for one request."""

    def __init__(self) -> None:
        self.auth = BasicAuth({USER: HASH})
        self.limiter = AttemptLimiter()
        self.lock = threading.Lock()

    def status(self, header: str | None, client: str) -> int:
        given = credentials(header)
        if given is None:
            return 401
        if self.auth.remembered(given):
            return 200
        with self.lock:
            if self.limiter.take(client, time.monotonic()) is not None:
                return 429
        started = time.monotonic()
        if self.auth.verify(given):
            with self.lock:
                self.limiter.give_back(client, time.monotonic())
            return 200
        time.sleep(max(0.0, started + self.auth.failure_floor_s - time.monotonic()))
        return 401


GATE = Gate()
REASONS = {200: "200 OK", 401: "401 Unauthorized", 429: "429 Too Many Requests"}


def wsgi_app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    status = GATE.status(environ.get("HTTP_AUTHORIZATION"), environ.get("REMOTE_ADDR", ""))
    if status != 200:
        start_response(REASONS[status], [("Content-Type", "text/plain"),
                                         ("WWW-Authenticate", 'Basic realm="smartarray"')])
        return [b"no\n"]
    start_response("200 OK", [("Content-Type", "text/plain; version=0.0.4"),
                              ("Content-Length", str(len(BODY)))])
    return [BODY]


def tls_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, KEY)
    return context


def agent(port: int) -> None:
    """The agent's endpoint, as ``serve`` runs it (its log at INFO, as the unit's)."""
    import logging

    from smartarray_agent.exporter.server import ExporterServer
    from smartarray_agent.exporter.webconfig import WebSecurity

    logging.basicConfig(level=logging.INFO)
    server = ExporterServer(("127.0.0.1", port), lambda compressed: BODY,
                            WebSecurity(tls=tls_context(), auth=GATE.auth))
    server.start()
    threading.Event().wait()


def prometheus_client_server(port: int) -> None:
    """prometheus_client's ``start_wsgi_server``, assembled as that function assembles it (a
    thread per connection, the socket wrapped in TLS at accept), with the gate as its app:
    the function itself serves only a registry and takes no auth."""
    from wsgiref.simple_server import make_server

    from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler

    httpd = make_server("127.0.0.1", port, wsgi_app, ThreadingWSGIServer,
                        handler_class=_SilentHandler)
    httpd.socket = tls_context().wrap_socket(httpd.socket, server_side=True)
    httpd.serve_forever()


def gunicorn(port: int) -> None:
    """gunicorn with gthread workers, as its documentation advises for I/O-bound work and
    prometheus-pve-exporter runs it: 2 workers of 8 threads (the docs' 2-4 workers per core,
    on 2 cores, kept low: every worker holds its own limiter), up to 1,000 connections each,
    keep-alive 5 s, a 30 s worker timeout, the request line and headers bounded."""
    os.execvp(sys.executable, [
        sys.executable, "-m", "gunicorn", "--chdir", str(Path(__file__).parent),
        "--bind", f"127.0.0.1:{port}", "--certfile", str(CERT), "--keyfile", str(KEY),
        "--worker-class", "gthread", "--workers", "2", "--threads", "8",
        "--worker-connections", "1000", "--keep-alive", "5", "--timeout", "30",
        "--limit-request-line", "4094", "--limit-request-fields", "100",
        "--limit-request-field_size", "8190", "--backlog", "512",
        "http_candidates:wsgi_app"])


def cheroot_server(port: int) -> None:
    """cheroot's WSGI server (CherryPy's) with its builtin TLS adapter."""
    from cheroot import wsgi
    from cheroot.ssl.builtin import BuiltinSSLAdapter

    # Its docs: a thread pool (numthreads) serves one connection per thread; a socket timeout
    # (timeout) bounds every read, the TLS handshake included; accepted connections wait
    # in a queue for a thread for at most accepted_queue_timeout.
    server = wsgi.Server(("127.0.0.1", port), wsgi_app, numthreads=32, timeout=10,
                         accepted_queue_size=1024, accepted_queue_timeout=10,
                         request_queue_size=512)
    server.ssl_adapter = BuiltinSSLAdapter(str(CERT), str(KEY))
    server.start()


CANDIDATES: dict[str, Callable[[int], None]] = {
    "agent (aiohttp)": agent,
    "gunicorn-gthread": gunicorn,
    "cheroot": cheroot_server,
    "prometheus_client": prometheus_client_server,
}

if __name__ == "__main__":
    CANDIDATES[sys.argv[1]](int(sys.argv[2]))
