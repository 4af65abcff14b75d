"""The HTTP servers issue #26 asked to weigh against the agent's own, each serving the same page
the same way, for ``http_servers.py`` to attack: ``python http_candidates.py NAME PORT``.

Every candidate listens on 127.0.0.1:PORT with TLS (tests/tls) and basic auth. The auth is the
agent's own gate (``smartarray_agent.exporter.auth``: remembered logins, the attempt limiter,
the bcrypt check, the floor under a failed login), put in front of each server the way that
server takes application code, so that what differs between candidates is the server alone:
its parsing of requests, its concurrency and its time limits. Each runs with the defaults its
documentation shows, as an exporter would ship it."""

from __future__ import annotations

import asyncio
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


def ours(port: int) -> None:
    """The agent's endpoint, as ``serve`` runs it."""
    from smartarray_agent.exporter.server import ExporterServer
    from smartarray_agent.exporter.webconfig import WebSecurity

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


def gunicorn(port: int, worker_class: str) -> None:
    """gunicorn with one worker of ``worker_class`` (sync is its default; prometheus-pve-exporter
    runs gthread)."""
    os.execvp(sys.executable, [
        sys.executable, "-m", "gunicorn", "--chdir", str(Path(__file__).parent),
        "--bind", f"127.0.0.1:{port}", "--certfile", str(CERT), "--keyfile", str(KEY),
        "--worker-class", worker_class, "--workers", "1", "--log-level", "critical",
        "http_candidates:wsgi_app"])


def aiohttp_server(port: int) -> None:
    """aiohttp's web server; the gate's blocking parts run in the loop's default executor."""
    from aiohttp import web

    async def metrics(request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        status = await loop.run_in_executor(None, GATE.status,
                                            request.headers.get("Authorization"),
                                            request.remote or "")
        if status != 200:
            return web.Response(status=status, text="no\n",
                                headers={"WWW-Authenticate": 'Basic realm="smartarray"'})
        return web.Response(body=BODY, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    web.run_app(app, host="127.0.0.1", port=port, ssl_context=tls_context(),
                access_log=None, print=None)


def cheroot_server(port: int) -> None:
    """cheroot's WSGI server (CherryPy's) with its builtin TLS adapter."""
    from cheroot import wsgi
    from cheroot.ssl.builtin import BuiltinSSLAdapter

    server = wsgi.Server(("127.0.0.1", port), wsgi_app)
    server.ssl_adapter = BuiltinSSLAdapter(str(CERT), str(KEY))
    server.start()


CANDIDATES: dict[str, Callable[[int], None]] = {
    "ours": ours,
    "prometheus_client": prometheus_client_server,
    "gunicorn-sync": lambda port: gunicorn(port, "sync"),
    "gunicorn-gthread": lambda port: gunicorn(port, "gthread"),
    "aiohttp": aiohttp_server,
    "cheroot": cheroot_server,
}

if __name__ == "__main__":
    CANDIDATES[sys.argv[1]](int(sys.argv[2]))
