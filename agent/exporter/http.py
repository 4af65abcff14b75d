"""The HTTP endpoint: ``/metrics`` (the last exposition, never a vendor CLI call; gzip when
the scraper accepts it, as Prometheus does), ``/`` (a small page linking to it) and
``/-/healthy``. Optional TLS and basic auth (webconfig.py)
apply to every path.

One thread per connection (HTTP/1.1 keep-alive, as Prometheus scrapes); the TLS handshake
happens in that thread, so a slow client never holds up the others.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version

from smartarray_agent.exporter.render import CONTENT_TYPE
from smartarray_agent.exporter.webconfig import WebSecurity

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 120.0  # keep-alive connections idle longer than this are closed
_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>smartarray-agent</title></head>
<body><h1>smartarray-agent</h1>
<p>HP/HPE Smart Array write cache and backup power, for Prometheus. Version {version}.</p>
<ul><li><a href="metrics">/metrics</a>: the metrics</li>
<li><a href="-/healthy">/-/healthy</a>: health check</li></ul>
</body></html>
"""


class ExporterServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 50 scrapers connecting at once must not overflow the backlog

    def __init__(
        self, address: tuple[str, int], body: Callable[[bool], bytes], security: WebSecurity
    ) -> None:
        self.body = body
        self.security = security
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.page = _PAGE.format(version=version("smartarray-agent")).encode()
        super().__init__(address, _Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        scheme = "https" if self.security.tls is not None else "http"
        return f"{scheme}://{host}:{port}/"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.2}, name="http", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
        self.server_close()

    def finish_request(self, request, client_address) -> None:
        tls = self.security.tls
        if tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            wrapped = tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            log.debug("TLS handshake with %s failed: %s", client_address[0], error)
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()


class _Handler(BaseHTTPRequestHandler):
    server: ExporterServer
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    # Headers and body leave in two writes; with Nagle's algorithm a small (gzip) body waits
    # for the client's delayed ACK of the headers: 40 ms a scrape.
    disable_nagle_algorithm = True

    def version_string(self) -> str:
        return "smartarray-agent"

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        auth = self.server.security.auth
        if auth is not None and not auth.check(self.headers.get("Authorization")):
            self._send(401, b"Unauthorized\n", "text/plain; charset=utf-8", send_body,
                       {"WWW-Authenticate": 'Basic realm="smartarray-agent"'})
            return
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            compressed = "gzip" in self.headers.get("Accept-Encoding", "")
            encoding = {"Content-Encoding": "gzip"} if compressed else {}
            self._send(200, self.server.body(compressed), CONTENT_TYPE, send_body,
                       {**encoding, "Vary": "Accept-Encoding"})
        elif path == "/":
            self._send(200, self.server.page, "text/html; charset=utf-8", send_body)
        elif path == "/-/healthy":
            self._send(200, b"OK\n", "text/plain; charset=utf-8", send_body)
        else:
            self._send(404, b"Not Found\n", "text/plain; charset=utf-8", send_body)

    def _send(
        self, code: int, body: bytes, content_type: str, send_body: bool,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base's name)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s", self.address_string(), format % args)
