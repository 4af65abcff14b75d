"""What a scrape is served: the exposition of the latest result of every collector.

The text and its gzip form (what Prometheus asks for) are made when a result is published
and kept, so a scrape costs a lookup. They are made again only when data they show passes
``stale_after_s`` (then that data is dropped), by whichever thread notices first.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.exporter.render import MetricSettings, render, stale_at


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
        self._results: dict[str, CollectorResult] = {}
        self._rendered = self._render()

    def publish(self, result: CollectorResult) -> None:
        with self._lock:
            self._results[result.name] = result
            self._rendered = self._render()

    def forget(self, name: str) -> None:
        """Drop a collector that is no longer configured."""
        with self._lock:
            if self._results.pop(name, None) is not None:
                self._rendered = self._render()

    def configure(self, settings: MetricSettings) -> None:
        with self._lock:
            self._settings = settings
            self._rendered = self._render()

    def results(self) -> list[CollectorResult]:
        with self._lock:
            return list(self._results.values())

    def body(self, compressed: bool = False) -> bytes:
        """The exposition; gzip-compressed when ``compressed``."""
        rendered = self._rendered
        if rendered.valid_until is not None and self._clock() > rendered.valid_until:
            with self._lock:
                valid_until = self._rendered.valid_until
                if valid_until is not None and self._clock() > valid_until:
                    self._rendered = self._render()
                rendered = self._rendered
        return rendered.gzipped if compressed else rendered.body

    def _render(self) -> _Rendered:
        now = self._clock()
        results = list(self._results.values())
        body = render(results, now=now, settings=self._settings)
        return _Rendered(
            body=body,
            gzipped=gzip.compress(body, compresslevel=6, mtime=0),
            valid_until=stale_at(results, self._settings, now),
        )
