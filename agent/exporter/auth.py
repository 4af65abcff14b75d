"""HTTP basic auth against bcrypt hashes, built to be hard to abuse (docs/agent.md, "Web
config"). A verified login is remembered as a SHA-256 digest of user, password and hash: a
scrape costs a lookup, never bcrypt, whatever others attempt, and a reload keeps the logins
whose hash it keeps. Passwords are cut at bcrypt's 72 bytes, as htpasswd cut them when it
made the hash. An unknown user is checked against the costliest hash and every failure takes
at least :attr:`BasicAuth.failure_floor_s`: names cannot be told apart by time.
:class:`AttemptLimiter` bounds unverified attempts per client and for all clients that never
logged in together (the endpoint answers 429 beyond): rotating addresses buys nothing.
"""

from __future__ import annotations

import hashlib
import ipaddress
import threading
import time
from typing import TypeVar

import aiohttp
import bcrypt

BCRYPT_MAX_PASSWORD_BYTES = 72
# The costliest hash a web config may hold: each step doubles a check, which exporter-toolkit
# puts at ~70 ms for cost 10: 12 takes about a second at 8 processes per CPU, 14 three
# (docs/benchmarks.md, login_attack.py). It bounds how long one request holds the single
# checker thread, and so how long a scraper's first login waits.
MAX_BCRYPT_COST = 12
FAILURE_FLOOR_S = 0.5  # a failed login is never answered sooner than this
_VERIFIED_CACHE_SIZE = 256
V = TypeVar("V")


def credentials(header: str | None) -> aiohttp.BasicAuth | None:
    """The user and password of a ``Basic`` Authorization header (the password's bytes as
    latin-1, every one as sent); None if none or malformed."""
    try:
        given = aiohttp.BasicAuth.decode(header or "", encoding="latin-1")
    except ValueError:
        return None
    return given._replace(login=given.login.encode("latin-1").decode("utf-8", errors="replace"))


class BasicAuth:
    def __init__(self, users: dict[str, str]) -> None:
        self._users = {user: hashed.encode() for user, hashed in users.items()}
        # The hash an unknown user is checked against: the costliest one ("$2b$12$...").
        self._decoy = max(self._users.values(), key=lambda hashed: int(hashed[4:6]))
        self._verified: set[bytes] = set()
        self._slowest_s = 0.0
        self._lock = threading.Lock()

    @property
    def failure_floor_s(self) -> float:
        """The least time a failed login takes: FAILURE_FLOOR_S or the slowest check seen."""
        return max(FAILURE_FLOOR_S, self._slowest_s)

    def adopt(self, previous: BasicAuth) -> None:
        """Keep the logins ``previous`` verified (on reload): safe whatever changed, as a
        digest covers the user's hash (:meth:`_digest`)."""
        with previous._lock, self._lock:
            self._verified |= previous._verified

    def remembered(self, given: aiohttp.BasicAuth) -> bool:
        """True when these credentials were verified before: no bcrypt needed."""
        with self._lock:
            return self._digest(given) in self._verified

    def verify(self, given: aiohttp.BasicAuth) -> bool:
        """The bcrypt check (tens of milliseconds or more: call it off the event loop).
        Thread-safe; a success is remembered."""
        hashed = self._users.get(given.login)
        password = given.password.encode("latin-1")[:BCRYPT_MAX_PASSWORD_BYTES]
        started = time.monotonic()
        matched = bcrypt.checkpw(password, hashed or self._decoy) and hashed is not None
        with self._lock:
            self._slowest_s = max(self._slowest_s, time.monotonic() - started)
            if matched:
                if len(self._verified) >= _VERIFIED_CACHE_SIZE:
                    self._verified.clear()
                self._verified.add(self._digest(given))
        return matched

    def _digest(self, given: aiohttp.BasicAuth) -> bytes:
        """Covers the user's hash: a changed or removed user's old password matches none."""
        hashed = self._users.get(given.login, b"")
        parts = (given.login.encode(), given.password.encode("latin-1"), hashed)
        return hashlib.sha256(b"\0".join(parts)).digest()


def client_key(address: str) -> str:
    """Whom the limiter counts: the address, or its /64 for IPv6 (one host's share)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class AttemptLimiter:
    """Per client (:func:`client_key`), ``burst`` unverified attempts refilled one every
    ``every_s``; for all clients that never logged in, a shared ``total_burst`` refilled one
    every ``total_every_s``. An attempt takes its tokens before bcrypt runs; a success gives
    them back and makes the client known. At most ``clients`` buckets and as many known
    clients are kept (the oldest go first). Each token bucket is held as the moment it is
    full again (the generic cell rate algorithm): one number, no timer."""

    def __init__(self, burst: int = 5, every_s: float = 5.0, clients: int = 4096,
                 total_burst: int = 8, total_every_s: float = 1.0) -> None:
        self.burst, self.every_s, self.clients = burst, every_s, clients
        self.total_burst, self.total_every_s = total_burst, total_every_s
        self._full_at: dict[str, float] = {}  # per client; absent: full
        self._shared_full_at = 0.0
        self._known: dict[str, None] = {}  # insertion-ordered: the oldest first

    def known(self, client: str) -> bool:
        return client_key(client) in self._known

    def take(self, client: str, now: float) -> float | None:
        """Take a token: None when there was one, else the seconds until the next."""
        key = client_key(client)
        own = max(now, self._full_at.get(key, now))
        wait = own - now - (self.burst - 1) * self.every_s
        if wait <= 0 and key not in self._known:
            shared = max(now, self._shared_full_at)
            wait = shared - now - (self.total_burst - 1) * self.total_every_s
            if wait <= 0:
                self._shared_full_at = shared + self.total_every_s
        if wait > 0:
            return wait
        _put(self._full_at, key, own + self.every_s, self.clients)
        return None

    def refund(self, client: str, now: float) -> None:
        """Give back the tokens an attempt took (one refused for another reason)."""
        key = client_key(client)
        if key in self._full_at and (own := self._full_at.pop(key) - self.every_s) > now:
            self._full_at[key] = own
        if key not in self._known:
            self._shared_full_at = max(now, self._shared_full_at - self.total_every_s)

    def verified(self, client: str, now: float) -> None:
        """A success: the tokens back, and the client known from now on."""
        self.refund(client, now)
        _put(self._known, client_key(client), None, self.clients)


def _put(table: dict[str, V], key: str, value: V, size: int) -> None:
    """``table[key] = value`` as its newest entry, the oldest dropped past ``size``."""
    table.pop(key, None)
    if len(table) >= size:
        table.pop(next(iter(table)))
    table[key] = value
