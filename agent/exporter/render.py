"""The exposition: every collector's last result -> the text format. Pure: no I/O, no
clock (``now`` is given, on the monotonic clock: ages are judged on it, the wall clock only
for the timestamps shown). One registry's ``generate_latest``, made once per round
(docs/layout.md; what stale data does: docs/metrics.md)."""

from __future__ import annotations

import platform
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from smartarray_agent.collectors.base import AnyCollector, CollectorResult
from smartarray_agent.collectors.families import Families
from smartarray_agent.revision import revision

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

HELP = {
    "smartarray_build_info": "The agent's version, the git commit it was built from and the "
                             "Python it runs on; always 1.",
    "smartarray_collector_success": "1 when the collector's last attempt succeeded, else 0.",
    "smartarray_collector_duration_seconds": "How long the collector's last attempt took.",
    "smartarray_collector_last_success_timestamp_seconds":
        "Unix time the collector last succeeded; its data is that old.",
}

Entry = tuple[AnyCollector, CollectorResult[Any]]  # a collector and its last result


@dataclass(frozen=True)
class MetricSettings:
    stale_after_s: float | None  # None: never drop the last good values


def is_fresh(result: CollectorResult[Any], now: float, settings: MetricSettings) -> bool:
    """The result's data is served: it exists and, at ``now`` (monotonic), is not older than
    ``stale_after_s``."""
    if result.data is None or settings.stale_after_s is None:
        return result.data is not None
    at = result.last_success_monotonic
    return at is not None and now - at <= settings.stale_after_s


def valid_until(entries: Sequence[Entry], settings: MetricSettings, now: float) -> float | None:
    """The last moment (monotonic) the exposition made at ``now`` is right (None: until the
    next result), after which some data goes stale or a collector's families change (an iLO
    charge)."""
    times: list[float] = []
    for collector, result in entries:
        if not is_fresh(result, now, settings):
            continue
        if settings.stale_after_s is not None and result.last_success_monotonic is not None:
            times.append(result.last_success_monotonic + settings.stale_after_s)
        changes = collector.changes_at(result.data)
        if changes is not None:
            times.append(changes)
    return min((t for t in times if t >= now), default=None)


class _Exposition:
    """A prometheus_client collector: the agent's own series (its build, each collector's
    last attempt), then each collector's families while its result is fresh."""

    def __init__(self, entries: Sequence[Entry], now: float, settings: MetricSettings) -> None:
        self.entries, self.now, self.settings = entries, now, settings

    def collect(self) -> Iterator[Metric]:
        out = Families(HELP)
        out.gauge("smartarray_build_info", build_labels(), 1.0)
        for _, result in self.entries:
            labels = {"collector": result.name}
            out.gauge("smartarray_collector_success", labels, float(result.success))
            out.gauge("smartarray_collector_duration_seconds", labels, result.duration_s)
            out.gauge("smartarray_collector_last_success_timestamp_seconds", labels,
                      result.last_success_at)
        yield from out.metrics()
        for collector, result in self.entries:
            if is_fresh(result, self.now, self.settings):
                yield from collector.families(result.data, self.now)


def render(entries: Sequence[Entry], *, now: float, settings: MetricSettings,
           extra: Sequence[Collector] = ()) -> bytes:
    """The text exposition (format 0.0.4) of ``entries`` and ``extra``."""
    out = CollectorRegistry(auto_describe=False)
    for collector in (_Exposition(entries, now, settings), *extra):
        out.register(collector)
    return generate_latest(out)


@cache
def build_labels() -> dict[str, str]:
    """``smartarray_build_info``'s labels, found once, when a page is first rendered."""
    return {"version": version("smartarray-agent"), "revision": revision(),
            "python": platform.python_version()}
