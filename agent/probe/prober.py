"""``/probe?target=HOST[:PORT]&module=NAME``: another host's controllers, read from its iLO
over Redfish (collectors/redfish/crawl.py, snapshot.py), rendered by the local agent's own
renderer (collectors/ssacli/metrics.py) so the names and labels are the same, with
``smartarray_probe_success`` and ``smartarray_probe_duration_seconds`` as the blackbox
exporter has them, and ``smartarray_probe_snapshot_age_seconds``. A failed probe is a 200
with ``smartarray_probe_success 0``; why it failed is logged (never a password:
RedfishError's messages hold none).

Refused before any connection: a malformed query or an unknown module (400), a target that
no ``[probe] targets`` pattern admits (403; targets.py says which do).

Answered from the last read: a probe of a target read before is answered at once from that
read's result (a failed one too: a wrong password is not retried at each scrape, which could
lock the iLO account), with its age, and starts a new read in the background when none is
under way and the last login started ``min_interval_s`` ago or more. A read of a slow iLO (a
dozen requests of 1-3 s each) takes longer than a scrape timeout; answering from the last
read keeps every probe within it (benchmarks/probe_scale.py). Only the first probe of a
target waits for its read: until ``timeout_s`` after the request, or half a second before
the scrape timeout Prometheus sends when that is sooner; an iLO slower than that is
``smartarray_probe_success 0`` that time.

Bounded: at most ``max_sessions`` iLO sessions at once (more reads wait in line, at most
WAITING_PER_SESSION per session, beyond which no read is queued and the probe gets the last
answer, or fails when there is none); one read per target and module at a time; one login
per target and module per ``min_interval_s``, counted from the login's start; a read ends
``refresh_timeout_s`` after its start.

The HTTP loop never blocks here: :meth:`Prober.probe` answers at once or hands back a
:class:`Pending` whose Future a worker thread completes, which :meth:`Prober.respond` awaits
on the loop until the probe's time is up. The reads stay on these threads, with
collectors/redfish/client.py's own deadlines, not on the HTTP loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from pydantic import ValidationError

from smartarray_agent.collectors.families import Families
from smartarray_agent.collectors.redfish.crawl import read_ilo
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.ssacli.metrics import families
from smartarray_agent.common.model import Snapshot
from smartarray_agent.config import ProbeConfig, ProbeModule
from smartarray_agent.probe.targets import Target, TargetPattern

log = logging.getLogger(__name__)

PATH = "/probe"
DEFAULT_MODULE = "default"
SCRAPE_TIMEOUT_HEADER = "x-prometheus-scrape-timeout-seconds"
SCRAPE_TIMEOUT_MARGIN_S = 0.5  # the answer's way back to Prometheus
WAITING_PER_SESSION = 8  # probes in line (under way included) per iLO session, at most
HELP = {
    "smartarray_probe_success": "1 when the iLO was read, else 0.",
    "smartarray_probe_duration_seconds": "How long reading the iLO took.",
    "smartarray_probe_snapshot_age_seconds": "Seconds since the read this answer comes from "
                                             "ended.",
}
FORGET_S = 3600.0  # a target no probe asked about for this long (or min_interval_s) is dropped
FULL_LOG_S = 60.0  # a full waiting line is logged at most this often

Key = tuple[str, str]  # normalized host:port, module


@dataclass(frozen=True)
class ProbeAnswer:
    status: int
    body: bytes  # the exposition for a 200, else plain text saying why


@dataclass(frozen=True)
class Pending:
    """A probe under way: ``result`` completes on a worker thread; ``late`` is the answer
    once ``timeout_s`` has passed without it."""

    result: Future[ProbeAnswer]
    timeout_s: float
    late: ProbeAnswer


@dataclass(frozen=True)
class _Read:
    """A read's result: the snapshot (None: it failed), when it ended, how long it took."""

    snapshot: Snapshot | None
    ended: float  # monotonic
    duration_s: float


@dataclass
class _Target:
    """One target and module: its last read, the read under way, when its last login began."""

    asked: float  # the last probe, monotonic
    last: _Read | None = None
    reading: Future[ProbeAnswer] | None = None  # queued or under way
    login_started: float | None = None


class _Refused(ValueError):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class Prober:
    """Answers ``/probe`` requests for ``config``; ``threshold_percent`` is the interlock's,
    for ``smartarray_unprotected_write_cache``. :meth:`close` when done."""

    def __init__(self, config: ProbeConfig, threshold_percent: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.threshold_percent = threshold_percent
        self._clock = clock
        self._patterns = [TargetPattern.parse(pattern) for pattern in config.targets]
        self._workers = ThreadPoolExecutor(config.max_sessions, thread_name_prefix="probe")
        self._lock = threading.Lock()  # _targets: the loop and the workers change it
        self._targets: dict[Key, _Target] = {}
        self._waiting = 0  # reads submitted and not ended: at most max_waiting
        self.max_waiting = WAITING_PER_SESSION * config.max_sessions
        # A full line is logged once a minute, with the refusals since: an undersized
        # prober refuses a read on almost every probe.
        self._full_logged_at: float | None = None
        self._full_unlogged = 0

    def close(self) -> None:
        """Cancel the probes waiting in line; those under way end on their own."""
        self._workers.shutdown(wait=False, cancel_futures=True)

    def probe(self, query: str, scrape_timeout: str | None = None) -> ProbeAnswer | Pending:
        """The answer to a probe with ``query`` (and Prometheus's scrape timeout header) now
        (a refusal, the last read's answer), or the first read under way. On the HTTP loop:
        never blocks."""
        try:
            key, module = self._parse(query)
        except _Refused as refused:
            log.debug("/probe refused (%d): %s", refused.status, refused)
            return ProbeAnswer(refused.status, f"{refused}\n".encode())
        timeout_s = self._timeout(scrape_timeout)
        now = self._clock()
        with self._lock:
            target = self._targets.get(key)
            if target is None:
                self._forget_old(now)
                target = self._targets[key] = _Target(now)
            target.asked = now
            if target.reading is None and (target.login_started is None or now
                                           - target.login_started >= self.config.min_interval_s):
                self._start_read(key, module, target, now)
            last, reading = target.last, target.reading
        if last is not None:
            return self.answer(last.snapshot, last.duration_s, now - last.ended)
        if reading is None:  # no read could be queued
            return self.answer(None, 0.0)
        return Pending(reading, timeout_s, self.answer(None, timeout_s))

    async def respond(self, query: str, scrape_timeout: str | None) -> ProbeAnswer:
        """:meth:`probe` on the HTTP loop: a first probe gets its read's answer, or the late
        one when the read is not done in time (it goes on, for the next probe)."""
        outcome = self.probe(query, scrape_timeout)
        if not isinstance(outcome, Pending):
            return outcome
        read = asyncio.wrap_future(outcome.result)
        await asyncio.wait([read], timeout=outcome.timeout_s)
        return read.result() if read.done() and not read.cancelled() else outcome.late

    def answer(self, snapshot: Snapshot | None, duration_s: float,
               age_s: float | None = None) -> ProbeAnswer:
        """The page for ``snapshot`` (None: the read failed), read ``age_s`` ago (None: no
        read ended in time for this probe). A snapshot that cannot be rendered is a failed
        read: one target's read never takes the answer down."""
        try:
            return self._page(snapshot, duration_s, age_s)
        except Exception:  # a bug; the model's bounds keep out the numbers known to do this
            if snapshot is None:
                raise
            log.exception("a probe's read could not be rendered; answered as a failed read")
            return self._page(None, duration_s, age_s)

    def _page(self, snapshot: Snapshot | None, duration_s: float,
              age_s: float | None) -> ProbeAnswer:
        out = Families(HELP)
        out.gauge("smartarray_probe_success", {}, float(snapshot is not None))
        out.gauge("smartarray_probe_duration_seconds", {}, round(duration_s, 6))
        if age_s is not None:
            out.gauge("smartarray_probe_snapshot_age_seconds", {}, round(age_s, 3))
        found = out.metrics()
        if snapshot is not None:
            found += families(snapshot, self.threshold_percent)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Fixed(found))
        return ProbeAnswer(200, generate_latest(registry))

    # -- on the HTTP loop ----------------------------------------------------------------------
    def _parse(self, query: str) -> tuple[Key, str]:
        try:
            params = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query),
                              max_num_fields=8)
        except ValueError:
            raise _Refused(400, "malformed query: use ?target=HOST[:PORT]&module=NAME") from None
        targets = params.get("target", [])
        modules = params.get("module", [DEFAULT_MODULE])
        if len(targets) != 1 or len(modules) != 1:
            raise _Refused(400, "give one target=HOST[:PORT] and at most one module=NAME")
        module = modules[0]
        if module not in self.config.modules:
            raise _Refused(400, f"unknown module {module[:64]!r}: "
                                f"[probe.modules.NAME] names {', '.join(self.config.modules)}")
        try:
            target = Target.parse(targets[0])
        except ValueError as error:
            raise _Refused(400, f"target: {error}") from None
        if not any(pattern.admits(target) for pattern in self._patterns):
            raise _Refused(403, f"target {target} is not in [probe] targets")
        return (str(target), module), module

    def _timeout(self, scrape_timeout: str | None) -> float:
        timeout_s = self.config.timeout_s
        try:
            given = float(scrape_timeout) if scrape_timeout is not None else None
        except ValueError:
            given = None
        if given is not None and given > SCRAPE_TIMEOUT_MARGIN_S:  # also refuses nan
            timeout_s = min(timeout_s, given - SCRAPE_TIMEOUT_MARGIN_S)
        return timeout_s

    def _start_read(self, key: Key, module: str, target: _Target, now: float) -> None:
        """Queue a read of ``target`` unless the line is full or the prober closed. Under
        the lock."""
        if self._waiting >= self.max_waiting:
            if self._full_logged_at is not None and now - self._full_logged_at < FULL_LOG_S:
                self._full_unlogged += 1
                return
            log.warning("no read of %s queued: %d reads are waiting for an iLO session "
                        "([probe] max_sessions = %d; %d more refused since the last such "
                        "warning)", key[0], self._waiting, self.config.max_sessions,
                        self._full_unlogged)
            self._full_logged_at, self._full_unlogged = now, 0
            return
        try:
            target.reading = self._workers.submit(self._read, key, module, target)
        except RuntimeError:  # closed: a reload swapped this prober out just now
            return
        self._waiting += 1

    def _forget_old(self, now: float) -> None:
        """Drop the targets no probe asked about for FORGET_S (and ``min_interval_s``): the
        allow-list's wildcards must not let the table grow without end."""
        after = max(FORGET_S, self.config.min_interval_s)
        for key in [key for key, target in self._targets.items()
                    if target.reading is None and now - target.asked >= after]:
            del self._targets[key]

    # -- on a worker thread --------------------------------------------------------------------
    def _read(self, key: Key, module: str, target: _Target) -> ProbeAnswer:
        host = key[0]
        started = self._clock()
        with self._lock:
            target.login_started = started
        snapshot = None
        try:
            timeout_s = self.config.refresh_timeout_s
            settings = _settings(self.config.modules[module], host, timeout_s)
            snapshot = read_ilo(settings, time.monotonic() + timeout_s)  # the sockets' clock
        except RedfishError as error:
            log.warning("probe of %s (module %s) failed: %s", host, module, error)
        except ValidationError as error:  # the module's files changed since the config check
            log.warning("probe of %s (module %s): %s", host, module,
                        "; ".join(problem["msg"] for problem in error.errors()))
        except Exception:  # a bug must not stop the probes; it is logged in full
            log.exception("probe of %s (module %s) failed unexpectedly", host, module)
        ended = self._clock()
        with self._lock:
            target.last = _Read(snapshot, ended, ended - started)
            target.reading = None
            self._waiting -= 1
        return self.answer(snapshot, ended - started, 0.0)


class _Fixed:
    """A prometheus_client collector of families made beforehand."""

    def __init__(self, found: Sequence[Metric]) -> None:
        self.found = found

    def collect(self) -> Iterator[Metric]:
        yield from self.found


def _settings(module: ProbeModule, target: str, remaining_s: float) -> RedfishSettings:
    """The module's login for ``target``, no timeout longer than the read has left: the
    logout, tried after the deadline too, is held to it as well."""
    return module.model_copy(update={
        key: max(0.001, min(getattr(module, key), remaining_s))
        for key in ("connect_timeout_s", "read_timeout_s")}).at(target)
