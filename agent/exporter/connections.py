"""The connections the endpoint keeps: at most ``cap`` in all and ``per_client`` for one client
(:func:`~smartarray_agent.exporter.auth.client_key`), counted from the accept. A new one past
either bound takes the place of the least recently used one not being answered (its own
client's, past the per-client bound: issue #39 item 4), or is refused when there is none.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any


class Connection(asyncio.Protocol):
    """One connection: asyncio's calls pass on to aiohttp's protocol (``http``), and its end,
    which aiohttp has no public hook for, reaches the table. Closed when its first request is
    not whole ``first_request_s`` after the TLS handshake."""

    def __init__(self, http: asyncio.Protocol, client: str, table: Connections,
                 first_request_s: float) -> None:
        self.http, self.client, self.table = http, client, table
        self.first_request_s = first_request_s
        self.transport: asyncio.BaseTransport | None = None
        self.handover: asyncio.Task[Any] | None = None  # the TLS handshake, then aiohttp's start
        self.busy = 0  # requests being answered
        self.began = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.http.connection_made(transport)
        asyncio.get_running_loop().call_later(self.first_request_s, self._first_request_due)

    def data_received(self, data: bytes) -> None:
        self.http.data_received(data)

    def eof_received(self) -> bool | None:
        return self.http.eof_received()

    def pause_writing(self) -> None:
        self.http.pause_writing()

    def resume_writing(self) -> None:
        self.http.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.http.connection_lost(exc)
        self.table.drop(self)

    def _first_request_due(self) -> None:
        if not self.began:
            self.close()

    def close(self) -> None:
        """Now, dropping what is unsent (a plain close waits for the client to read it)."""
        if isinstance(self.transport, asyncio.Transport):
            self.transport.abort()
        elif self.handover is not None:
            self.handover.cancel()


class Connections:
    def __init__(self, cap: int, per_client: int) -> None:
        self.cap, self.per_client = cap, per_client
        self._open: dict[asyncio.Protocol, Connection] = {}  # by http, least recently used first
        self._counts: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._open)

    def __iter__(self) -> Iterator[Connection]:
        return iter(list(self._open.values()))

    def admit(self, conn: Connection) -> Connection | None:
        """Count ``conn`` in; the one to close: ``conn`` if refused, or the one it replaces."""
        if self._counts[conn.client] >= self.per_client:
            victim = self._idlest(conn.client) or conn
        elif len(self._open) >= self.cap:
            victim = self._idlest(None) or conn
        else:
            victim = None
        if victim is not conn:
            self._open[conn.http] = conn
            self._counts[conn.client] += 1
            if victim is not None:
                self.drop(victim)
        return victim

    def drop(self, conn: Connection) -> None:
        if self._open.pop(conn.http, None) is not None:
            self._counts[conn.client] -= 1
            if not self._counts[conn.client]:
                del self._counts[conn.client]

    def begin(self, http: asyncio.Protocol) -> None:
        """A request on ``http``'s connection is being answered: none closes it for room."""
        if (conn := self._open.get(http)) is not None:
            conn.busy += 1
            conn.began = True

    def end(self, http: asyncio.Protocol) -> None:
        """The answer is sent: the connection is now the most recently used."""
        if (conn := self._open.pop(http, None)) is not None:
            conn.busy -= 1
            self._open[http] = conn

    def _idlest(self, client: str | None) -> Connection | None:
        return next((conn for conn in self._open.values()
                     if not conn.busy and client in (None, conn.client)), None)
