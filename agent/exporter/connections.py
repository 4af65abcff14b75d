"""Which connections the endpoint keeps: at most ``cap`` in all and ``per_client`` for one
client (:func:`~smartarray_agent.exporter.auth.client_key`). A new connection past either
bound takes the place of the least recently used one not being answered (its own client's,
for the per-client bound): one client's many connections cost that client its own, never
another's (issue #39 item 4). It is closed at once only when every such one is being answered.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Generic, TypeVar

from smartarray_agent.exporter.auth import client_key

Conn = TypeVar("Conn")


@dataclass
class _Entry:
    client: str
    busy: int = 0  # requests being answered
    requests: int = 0  # requests begun


class Connections(Generic[Conn]):
    def __init__(self, cap: int, per_client: int) -> None:
        self.cap, self.per_client = cap, per_client
        self._entries: dict[Conn, _Entry] = {}  # least recently used first
        self._counts: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._entries)

    def admit(self, conn: Conn, peer: str) -> Conn | None:
        """Count ``conn`` in; the one to close for room (``conn`` when none can be), or None."""
        client = client_key(peer)
        victim: Conn | None = None
        if self._counts[client] >= self.per_client:
            victim = self._idlest(client) or conn
        elif len(self._entries) >= self.cap:
            victim = self._idlest(None) or conn
        if victim is not conn:
            self._entries[conn] = _Entry(client)
            self._counts[client] += 1
        return victim

    def drop(self, conn: Conn) -> None:
        if (entry := self._entries.pop(conn, None)) is not None:
            self._counts[entry.client] -= 1
            if not self._counts[entry.client]:
                del self._counts[entry.client]

    def begin(self, conn: Conn) -> None:
        """A request on ``conn`` is being answered: it is not closed to make room."""
        if (entry := self._entries.get(conn)) is not None:
            entry.busy += 1
            entry.requests += 1

    def end(self, conn: Conn) -> None:
        """The answer is sent: ``conn`` is now the most recently used."""
        if (entry := self._entries.pop(conn, None)) is not None:
            entry.busy -= 1
            self._entries[conn] = entry

    def unused(self, conn: Conn) -> bool:
        """Whether ``conn`` is still open and never began a request."""
        entry = self._entries.get(conn)
        return entry is not None and not entry.requests

    def _idlest(self, client: str | None) -> Conn | None:
        return next((conn for conn, entry in self._entries.items()
                     if not entry.busy and client in (None, entry.client)), None)
