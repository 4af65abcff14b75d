"""An ExporterServer for the HTTP tests: on a free loopback port, in the test's process,
serving a fixed body."""

from __future__ import annotations

from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity

BODY = b"smartarray_up 1\n" * 1000


def start(security: WebSecurity | None = None, body: bytes = BODY,
          max_connections: int | None = None) -> ExporterServer:
    server = ExporterServer(("127.0.0.1", 0), lambda compressed: body,
                            security or WebSecurity(), max_connections=max_connections)
    server.start()
    return server
