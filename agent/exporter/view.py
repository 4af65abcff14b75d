"""What a scrape is served: the exposition of the latest result of every collector, and its
gzip form, made once per collection round, so that a scrape costs a lookup. What a page shows
can change without a round (data passes ``stale_after_s``, an iLO charge expires): each page
is made with its successor, the page just after that change, which a scrape past the change
is served. The collection loop makes the next when the change comes
(:meth:`MetricsView.advance` at :meth:`MetricsView.changes_at`); a scrape makes one only
when the loop has fallen more than one change behind. Those times are on the monotonic
clock: a step of the wall clock neither keeps a page past its change nor ends it early.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from prometheus_client.registry import Collector

from smartarray_agent.exporter.render import Entry, MetricSettings, render, valid_until

AFTER_S = 0.001  # the successor page is made this long after the change


class _Page(NamedTuple):
    body: bytes
    gzipped: bytes
    valid_until: float | None  # the last moment it is right (None: until the next publish)


class MetricsView:
    def __init__(self, settings: MetricSettings, clock: Callable[[], float] = time.monotonic,
                 extra: Sequence[Collector] = ()) -> None:
        """``extra``: collectors whose series join every page (the daemon's process)."""
        self._clock = clock
        self._extra = extra
        self._lock = threading.Lock()
        self._settings = settings
        self._entries: dict[str, Entry] = {}
        self._pages = self._render()  # the current page, then its successor if it has one

    def publish(self, entries: Iterable[Entry]) -> None:
        """The results of one round (each with its collector); one render for all."""
        with self._lock:
            for collector, result in entries:
                self._entries[result.name] = (collector, result)
            self._pages = self._render()

    def forget(self, name: str) -> None:
        """Drop a collector that is no longer configured."""
        with self._lock:
            if self._entries.pop(name, None) is not None:
                self._pages = self._render()

    def configure(self, settings: MetricSettings) -> None:
        with self._lock:
            self._settings = settings
            self._pages = self._render()

    def changes_at(self) -> float | None:
        """When the page served now stops being right, for the loop to :meth:`advance`."""
        return self._pages[0].valid_until

    def advance(self) -> None:
        """Make the pages from now on (the loop, when a page's data changed)."""
        with self._lock:
            self._pages = self._render()

    def body(self, compressed: bool = False) -> bytes:
        now = self._clock()
        page = next((page for page in self._pages
                     if page.valid_until is None or now <= page.valid_until), None)
        if page is None:  # the loop is more than one change behind
            self.advance()
            page = self._pages[0]
        return page.gzipped if compressed else page.body

    def _render(self) -> tuple[_Page, ...]:
        current = self._page(self._clock())
        if current.valid_until is None:
            return (current,)
        return current, self._page(current.valid_until + AFTER_S)

    def _page(self, now: float) -> _Page:
        entries = list(self._entries.values())
        body = render(entries, now=now, settings=self._settings, extra=self._extra)
        return _Page(body, gzip.compress(body, compresslevel=6, mtime=0),
                     valid_until(entries, self._settings, now))
