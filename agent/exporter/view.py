"""What a scrape is served: the exposition of the latest result of every collector.

The text and its gzip form (what Prometheus asks for) are made once per collection round
and kept, so a scrape costs a lookup. They are made again only when what they show changes
without a round (data passes ``stale_after_s`` and is dropped, an iLO charge expires), by
whichever thread notices first.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from smartarray_agent.exporter.render import Entry, MetricSettings, render, valid_until


@dataclass(frozen=True)
class _Rendered:
    body: bytes
    gzipped: bytes = field(repr=False)
    valid_until: float | None  # re-render after this Unix time (None: until the next publish)


class MetricsView:
    def __init__(self, settings: MetricSettings, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._settings = settings
        self._entries: dict[str, Entry] = {}
        self._rendered = self._render()

    def publish(self, entries: Iterable[Entry]) -> None:
        """The results of one round (each with its collector); one render for all."""
        with self._lock:
            for collector, result in entries:
                self._entries[result.name] = (collector, result)
            self._rendered = self._render()

    def forget(self, name: str) -> None:
        """Drop a collector that is no longer configured."""
        with self._lock:
            if self._entries.pop(name, None) is not None:
                self._rendered = self._render()

    def configure(self, settings: MetricSettings) -> None:
        with self._lock:
            self._settings = settings
            self._rendered = self._render()

    def body(self, compressed: bool = False) -> bytes:
        """The exposition; gzip-compressed when ``compressed``."""
        rendered = self._rendered
        if rendered.valid_until is not None and self._clock() > rendered.valid_until:
            with self._lock:
                until = self._rendered.valid_until
                if until is not None and self._clock() > until:
                    self._rendered = self._render()
                rendered = self._rendered
        return rendered.gzipped if compressed else rendered.body

    def _render(self) -> _Rendered:
        now = self._clock()
        entries = list(self._entries.values())
        body = render(entries, now=now, settings=self._settings)
        return _Rendered(
            body=body,
            gzipped=gzip.compress(body, compresslevel=6, mtime=0),
            valid_until=valid_until(entries, self._settings, now),
        )
