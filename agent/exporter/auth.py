"""HTTP basic auth against bcrypt hashes, built to be hard to abuse.

- A verified (user, password, hash) is remembered as a SHA-256 digest: the next scrape with
  the same credentials costs a hash lookup, never a bcrypt check, so Prometheus is not slowed
  by anyone's failed attempts.
- bcrypt reads only the first 72 bytes of a password; longer passwords are cut there, as
  htpasswd (crypt_blowfish) does when it makes the hash, so they log in instead of raising.
- An unknown user is checked against the costliest configured hash, and every failure is
  answered no sooner than :attr:`BasicAuth.failure_floor_s` after it arrived: a wrong user
  and a wrong password of any user take the same time, so names cannot be told apart.
- :class:`AttemptLimiter` gives each client a few unverified attempts, then one every few
  seconds; beyond that the endpoint answers 429 without running bcrypt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import time
from dataclasses import dataclass

import bcrypt

BCRYPT_MAX_PASSWORD_BYTES = 72
FAILURE_FLOOR_S = 0.5  # a failed login is never answered sooner than this
_VERIFIED_CACHE_SIZE = 256


@dataclass(frozen=True)
class Credentials:
    user: str
    password: bytes


def credentials(header: str | None) -> Credentials | None:
    """The user and password of a ``Basic`` Authorization header; None if there is none."""
    if not header:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(b":")
    if not sep:
        return None
    return Credentials(user.decode("utf-8", errors="replace"), password)


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
        """The least time a failed login takes: FAILURE_FLOOR_S, or the longest bcrypt check
        seen when a configured cost takes longer."""
        return max(FAILURE_FLOOR_S, self._slowest_s)

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

    def check(self, header: str | None) -> bool:
        """Whether ``header`` carries valid credentials (blocking: tests and tools)."""
        given = credentials(header)
        return given is not None and (self.remembered(given) or self.verify(given))

    def _digest(self, given: Credentials) -> bytes:
        hashed = self._users.get(given.user, b"")
        return hashlib.sha256(b"\0".join((given.user.encode(), given.password, hashed))).digest()


class AttemptLimiter:
    """Per client, a bucket of ``burst`` unverified attempts refilled one every ``every_s``
    seconds. An attempt takes a token before bcrypt runs and a success gives it back, so a
    client that keeps failing is held to one check per ``every_s`` while good credentials
    never run out. At most ``clients`` addresses are tracked (the oldest entries go first)."""

    def __init__(self, burst: int = 5, every_s: float = 5.0, clients: int = 4096) -> None:
        self.burst = burst
        self.every_s = every_s
        self.clients = clients
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)

    def take(self, client: str, now: float) -> float | None:
        """Take a token: None when there was one, else the seconds until the next."""
        tokens = self._tokens(client, now)
        if tokens < 1:
            return (1 - tokens) * self.every_s
        if client not in self._buckets and len(self._buckets) >= self.clients:
            self._buckets.pop(next(iter(self._buckets)))
        self._buckets[client] = (tokens - 1, now)
        return None

    def give_back(self, client: str, now: float) -> None:
        tokens = self._tokens(client, now) + 1
        if tokens >= self.burst:
            self._buckets.pop(client, None)
        else:
            self._buckets[client] = (tokens, now)

    def _tokens(self, client: str, now: float) -> float:
        tokens, at = self._buckets.get(client, (self.burst, now))
        return min(self.burst, tokens + (now - at) / self.every_s)
