"""The collection loop: one thread that runs every collector each ``interval_s``, and early
when udev asks, publishes each round and tells systemd (docs/agent.md, "systemd"); a
collector with an interval of its own, the iLO, reads in a thread of its own
(docs/redfish.md)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from smartarray_agent.collectors.base import AnyCollector, CollectorResult, collect_once
from smartarray_agent.daemon.debounce import Debounce
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import Entry
from smartarray_agent.exporter.view import AFTER_S, MetricsView
from smartarray_agent.sources import Enforce

log = logging.getLogger(__name__)

MAX_DEBOUNCE_FACTOR = 5  # a burst of events delays the collection at most 5 debounce delays
SCHEDULE_SLACK_S = 1.0  # a round this much early still runs a collector of its own interval


class CollectionLoop:
    def __init__(self, collectors: Sequence[AnyCollector], view: MetricsView,
                 notifier: Notifier, *, interval_s: float, debounce_s: float,
                 enforce: Enforce | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        """``enforce`` (the guard) sees each successful result; when it changes the hardware,
        that collector is collected again at once."""
        self._collectors = list(collectors)
        self._enforce = enforce
        self._view = view
        self._notifier = notifier
        self._interval_s = interval_s
        self._monotonic = monotonic
        self._debounce = Debounce(debounce_s, debounce_s * MAX_DEBOUNCE_FACTOR)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pending: tuple[list[AnyCollector] | None, Enforce | None, float,
                             float] | None = None
        self._last: dict[str, Entry] = {}
        self._attempted_at: dict[str, float] = {}  # monotonic start of each last attempt
        self._aside: dict[str, threading.Thread] = {}  # own-interval collectors reading now
        self._came: list[tuple[AnyCollector, CollectorResult]] = []  # their results, to publish
        self._round_started = self._monotonic()
        self.rounds = 0  # completed rounds of collection
        self._thread = threading.Thread(target=self._run, name="collect", daemon=True)

    # -- called from other threads -------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def join(self, timeout: float | None = None) -> bool:  # True when the loop has ended
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def collectors(self) -> list[AnyCollector]:
        return list(self._collectors)

    def poke(self) -> None:  # an early collection (udev), one for a burst of pokes
        with self._lock:
            self._debounce.poke(self._monotonic())
        self._wake.set()

    def reconfigure(self, collectors: list[AnyCollector] | None, interval_s: float,
                    debounce_s: float, enforce: Enforce | None = None) -> None:
        """Applied between rounds; ``collectors`` None keeps the running ones and ``enforce``."""
        with self._lock:
            self._pending = (collectors, enforce, interval_s, debounce_s)
        self._wake.set()

    # -- the loop thread -------------------------------------------------------------------
    def _run(self) -> None:
        for collector in self._collectors:
            collector.watch(self.poke)
        try:
            while not self._stop.is_set():
                self._collect_round()
                self._wait_for_next_round()
        finally:
            for collector in self._collectors:
                _close(collector)

    def _collect_round(self) -> None:
        with self._lock:
            self._debounce.clear()
        self._round_started = self._monotonic()
        collected: list[tuple[Entry, CollectorResult | None]] = []  # with the previous
        for collector in list(self._collectors):
            if self._stop.is_set():
                return
            if not self._due(collector):
                continue
            self._attempted_at[collector.name] = self._monotonic()
            if collector.interval_s is not None:
                self._collect_aside(collector)
                continue
            collected.append(self._collect(collector))
        self._view.publish(entry for entry, _ in collected)
        # Logged once served: whoever reads "collector ssacli ok" finds the data in /metrics.
        for (collector, result), previous_result in collected:
            _log_outcome(collector, result, previous_result)
        self.rounds += 1
        status = status_line(list(self._last.values()))
        if self.rounds == 1:
            self._notifier.ready(status)  # systemd: started, with data to serve
        else:
            self._notifier.status(status)
        self._notifier.watchdog()

    def _collect(self, collector: AnyCollector) -> tuple[Entry, CollectorResult | None]:
        """Collect now (again when the guard changed the hardware); with the previous result,
        its data let go: a big host's last snapshot must not outlive the new one's render."""
        previous = self._last.get(collector.name)
        before = previous[1] if previous else None
        result = collect_once(collector, before)
        if self._acted_on(collector, result):
            result = collect_once(collector, result)  # what the hardware shows now
        self._last[collector.name] = (collector, result)
        return (collector, result), before and replace(before, data=None)

    def _collect_aside(self, collector: AnyCollector) -> None:
        running = self._aside.get(collector.name)
        if running is not None and running.is_alive():
            return
        previous = self._last.get(collector.name)

        def collect() -> None:
            result = collect_once(collector, previous[1] if previous else None)
            with self._lock:
                self._came.append((collector, result))
            self._wake.set()

        thread = threading.Thread(target=collect, name=f"collect-{collector.name}",
                                  daemon=True)
        self._aside[collector.name] = thread
        thread.start()

    def _publish_aside(self) -> None:
        """Publish what the own-interval collectors brought (not a collector a reload
        replaced), the other pages made again over it."""
        with self._lock:
            came, self._came = self._came, []
        came = [(c, r) for c, r in came if c in self._collectors]
        if not came:
            return
        for collector, result in came:
            previous = self._last.get(collector.name)
            self._last[collector.name] = (collector, result)
            _log_outcome(collector, result, previous[1] if previous else None)
        self._view.publish(came)  # the page is made again for every collector

    def _acted_on(self, collector: AnyCollector, result: CollectorResult) -> bool:
        if self._enforce is None or not result.success:
            return False
        try:
            return self._enforce(collector, result.data)
        except Exception:  # a bug in the guard must not stop the collections
            log.exception("the guard failed after collector %s", collector.name)
            return False

    def _due(self, collector: AnyCollector) -> bool:
        """A collector with an ``interval_s`` of its own runs that long after its last try."""
        interval = collector.interval_s
        last = self._attempted_at.get(collector.name)
        if interval is None or last is None:
            return True
        return self._monotonic() - last >= interval - SCHEDULE_SLACK_S

    def _wait_for_next_round(self) -> None:
        while not self._stop.is_set():
            self._apply_pending()
            self._publish_aside()
            with self._lock:
                due = self._round_started + self._interval_s
                early = self._debounce.due_at()
            if early is not None:
                due = min(due, early)
            timeout = due - self._monotonic()
            if timeout <= 0:
                return
            changes_at = self._view.changes_at()
            if changes_at is not None:
                until_change = changes_at - self._monotonic()
                if until_change < 0:
                    self._view.advance()  # data expired: the page without it
                    continue
                timeout = min(timeout, until_change + AFTER_S)
            if self._notifier.watchdog_interval_s is not None:
                timeout = min(timeout, self._notifier.watchdog_interval_s / 2)
            self._wake.wait(timeout)
            self._wake.clear()
            self._notifier.watchdog()

    def _apply_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, None
            if pending is None:
                return
            collectors, enforce, self._interval_s, debounce_s = pending
            self._debounce = Debounce(debounce_s, debounce_s * MAX_DEBOUNCE_FACTOR)
        if collectors is None:
            return
        self._enforce = enforce
        names = {c.name for c in collectors}
        for old in self._collectors:
            _close(old)
            if old.name not in names:
                self._last.pop(old.name, None)
                self._view.forget(old.name)
        self._collectors = list(collectors)
        for collector in self._collectors:
            collector.watch(self.poke)
        self._attempted_at.clear()
        self._round_started = self._monotonic() - self._interval_s  # collect now


def status_line(entries: Sequence[Entry]) -> str:
    """``STATUS=``: ``ssacli ok: 2 controllers in 1.2 s; sysfs failed: ...``."""
    parts = []
    for collector, result in entries:
        if result.success and result.data is not None:
            parts.append(f"{result.name} ok: {collector.summary(result.data)} "
                         f"in {result.duration_s:.1f} s")
        else:
            parts.append(f"{result.name} failed: {result.error}")
    return "; ".join(parts)


def _log_outcome(collector: AnyCollector, result: CollectorResult,
                 previous: CollectorResult | None) -> None:
    if not result.success:
        if previous is None or previous.success or previous.error != result.error:
            log.warning("collector %s failed: %s", result.name, result.error)
    elif previous is None or not previous.success:
        log.info("collector %s ok: %s in %.1f s", result.name, collector.summary(result.data),
                 result.duration_s)


def _close(collector: AnyCollector) -> None:
    try:
        collector.close()
    except Exception:  # closing must not stop the others from closing
        log.exception("closing collector %s failed", collector.name)
