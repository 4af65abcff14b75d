"""Privilege separation's two halves (docs/privileges.md): the root agent's
:class:`Publisher` of the exposition into ``[web] publish_dir``, and ``serve``'s
:class:`PublishedExposition` of it, which trusts only a regular file of the directory's
owner, opened without following a symbolic link."""

from __future__ import annotations

import gzip
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest

from smartarray_agent.common.configfile import trust_problem
from smartarray_agent.common.files import replace_file
from smartarray_agent.common.trust import distrust
from smartarray_agent.exporter.webconfig import WebSecurity

log = logging.getLogger(__name__)

PLAIN = "metrics.prom"
POLL_S = 0.5  # how soon a new exposition is published
REFRESH_S = 30.0
MAX_AGE_S = 3 * REFRESH_S
FILE_MODE = 0o640


class Publisher:
    """Stands where the HTTP server would in the daemon (``security`` is the serving side's);
    OSError when ``directory`` cannot be used (missing, or root could be tricked)."""

    def __init__(self, directory: Path, body: Callable[[bool], bytes],
                 security: WebSecurity) -> None:
        self.directory = directory
        self.body = body
        self.security = security
        self.url = f"file://{directory}/{PLAIN}"
        info = os.stat(directory)
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(0, "not a directory", str(directory))
        problem = trust_problem(directory / PLAIN) if os.geteuid() == 0 else None
        if problem is not None:
            raise PermissionError(0, f"refused: {problem}", str(directory))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="publish", daemon=True)
        self._published: bytes | None = None
        self._at = 0.0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join()
        (self.directory / PLAIN).unlink(missing_ok=True)

    def publish(self) -> None:
        """Write the exposition if it changed, touch it if it is getting old."""
        plain, now = self.body(False), time.monotonic()
        if plain is not self._published:
            replace_file(self.directory / PLAIN, plain, FILE_MODE)
        elif now - self._at >= REFRESH_S:
            os.utime(self.directory / PLAIN)
        else:
            return
        self._published, self._at = plain, now

    def _run(self) -> None:
        while True:
            try:
                self.publish()
            except OSError as error:
                log.error("cannot publish the metrics in %s: %s", self.directory,
                          error.strerror or error)
                self._published = None  # write again at the next turn
            if self._stop.wait(POLL_S):
                return


class PublishedExposition:
    """``body(compressed)`` for ``serve``'s endpoint: the published page and ``serve``'s own
    series, or None when the agent has published nothing recent. PermissionError when
    ``directory`` is not a directory that only its owner may write."""

    def __init__(self, directory: Path, max_age_s: float = MAX_AGE_S,
                 clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        info = os.lstat(directory)
        found = distrust(info, kind="directory", owners=(info.st_uid,))
        if found is not None:
            raise PermissionError(0, f"refused: {found.describe(directory)}: only its owner "
                                  "may write what serve answers with", str(directory))
        self.directory = directory
        self.owner = info.st_uid
        self.max_age_s = max_age_s
        self._clock, self._monotonic = clock, monotonic
        # when (monotonic) the agent last wrote or touched the page serve answers with: its
        # age is judged on this, the wall clock (mtime) only where it tells a plausible one
        self._written_at: float | None = None
        self._own = CollectorRegistry(auto_describe=False)
        ProcessCollector(namespace="smartarray_serve", registry=self._own)
        self._cache: tuple[tuple[int, int], tuple[bytes, bytes]] | None = None  # plain, gzip

    def body(self, compressed: bool = False) -> bytes | None:
        try:
            fd = os.open(self.directory / PLAIN,
                         os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:  # missing, or a symbolic link (ELOOP)
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if distrust(info, kind="file", owners=(self.owner,), forbidden=0) is not None:
                return None
            key = (info.st_ino, info.st_mtime_ns)
            if self._cache is None or self._cache[0] != key:  # written or touched since
                now, age = self._monotonic(), self._clock() - info.st_mtime
                # a wall age out of range (a clock stepped since) is now, but at first sight
                self._written_at = now - age if 0 <= age <= self.max_age_s else (
                    None if self._cache is None else now)
                try:
                    plain = handle.read() + generate_latest(self._own)
                except OSError:
                    return None
                self._cache = (key, (plain, gzip.compress(plain, compresslevel=6, mtime=0)))
            if self._written_at is None or self._monotonic() - self._written_at > self.max_age_s:
                return None
        return self._cache[1][compressed]
