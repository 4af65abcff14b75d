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
import math
import threading
import time
from dataclasses import dataclass

import aiohttp
import bcrypt

BCRYPT_MAX_PASSWORD_BYTES = 72
# The costliest hash a web config may hold: each step doubles a check, which exporter-toolkit
# puts at ~70 ms for cost 10 (its users keep 10-12): 12 stays well under a second on a slow
# host, 14 does not (docs/benchmarks.md, login_attack.py). It bounds how long one request
# holds the single checker thread, and so how long a scraper's first login waits.
MAX_BCRYPT_COST = 12
FAILURE_FLOOR_S = 0.5  # a failed login is never answered sooner than this
_VERIFIED_CACHE_SIZE = 256


@dataclass(frozen=True)
class Credentials:
    user: str
    password: bytes


def credentials(header: str | None) -> Credentials | None:
    """The user and password of a ``Basic`` Authorization header; None if none or malformed."""
    if not header:
        return None
    try:
        given = aiohttp.BasicAuth.decode(header, encoding="latin-1")  # every byte, as sent
    except ValueError:
        return None
    user = given.login.encode("latin-1").decode("utf-8", errors="replace")
    return Credentials(user, given.password.encode("latin-1"))


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
        with previous._lock:
            verified = set(previous._verified)
        with self._lock:
            self._verified |= verified

    def remembered(self, given: Credentials) -> bool:
        """True when these credentials were verified before: no bcrypt needed."""
        with self._lock:
            return self._digest(given) in self._verified

    def verify(self, given: Credentials) -> bool:
        """The bcrypt check (tens of milliseconds or more: call it off the event loop).
        Thread-safe; a success is remembered."""
        hashed = self._users.get(given.user)
        password = given.password[:BCRYPT_MAX_PASSWORD_BYTES]
        started = time.monotonic()
        matched = bcrypt.checkpw(password, hashed or self._decoy) and hashed is not None
        took = time.monotonic() - started
        with self._lock:
            self._slowest_s = max(self._slowest_s, took)
            if matched:
                if len(self._verified) >= _VERIFIED_CACHE_SIZE:
                    self._verified.clear()
                self._verified.add(self._digest(given))
        return matched

    def _digest(self, given: Credentials) -> bytes:
        """Covers the user's hash: a changed or removed user's old password matches none."""
        hashed = self._users.get(given.user, b"")
        return hashlib.sha256(b"\0".join((given.user.encode(), given.password, hashed))).digest()


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


class _Bucket:
    """``burst`` tokens (full from the start), refilled one every ``every_s`` seconds."""

    def __init__(self, burst: int, every_s: float) -> None:
        self.burst, self.every_s = burst, every_s
        self.tokens, self.at = float(burst), -math.inf

    def level(self, now: float) -> float:
        return min(self.burst, self.tokens + (now - self.at) / self.every_s)

    def take(self, now: float) -> float | None:
        """None when a token was taken, else the seconds until the next."""
        tokens = self.level(now)
        if tokens < 1:
            return (1 - tokens) * self.every_s
        self.tokens, self.at = tokens - 1, now
        return None

    def give_back(self, now: float) -> None:
        self.tokens, self.at = min(self.burst, self.level(now) + 1), now


class AttemptLimiter:
    """Per client (:func:`client_key`), ``burst`` unverified attempts refilled one every
    ``every_s``; for all clients that never logged in, a shared ``total_burst`` refilled one
    every ``total_every_s``. An attempt takes its tokens before bcrypt runs; a success gives
    them back and makes the client known. At most ``clients`` buckets and as many known
    clients are kept (the oldest go first)."""

    def __init__(self, burst: int = 5, every_s: float = 5.0, clients: int = 4096,
                 total_burst: int = 8, total_every_s: float = 1.0) -> None:
        self.burst, self.every_s, self.clients = burst, every_s, clients
        self.total_burst, self.total_every_s = total_burst, total_every_s
        self._buckets: dict[str, _Bucket] = {}
        self._known: dict[str, None] = {}  # insertion-ordered: the oldest first
        self._shared = _Bucket(total_burst, total_every_s)

    def known(self, client: str) -> bool:
        return client_key(client) in self._known

    def take(self, client: str, now: float) -> float | None:
        """Take a token: None when there was one, else the seconds until the next."""
        key = client_key(client)
        bucket = self._buckets.get(key) or _Bucket(self.burst, self.every_s)
        if bucket.level(now) < 1:
            return bucket.take(now)
        if key not in self._known and (wait := self._shared.take(now)) is not None:
            return wait
        bucket.take(now)
        if key not in self._buckets and len(self._buckets) >= self.clients:
            self._buckets.pop(next(iter(self._buckets)))
        self._buckets[key] = bucket
        return None

    def give_back(self, client: str, now: float) -> None:
        """A success: the client's token back, and the client known from now on."""
        key = client_key(client)
        if (bucket := self._buckets.get(key)) is not None:
            bucket.give_back(now)
            if bucket.level(now) >= self.burst:
                del self._buckets[key]
        if key not in self._known:
            self._shared.give_back(now)
            if len(self._known) >= self.clients:
                self._known.pop(next(iter(self._known)))
        self._known.pop(key, None)
        self._known[key] = None
