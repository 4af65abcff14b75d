"""``/probe?target=HOST[:PORT]&module=NAME``: another host's controllers, read from its iLO
(collectors/redfish/crawl.py) and rendered by the local agent's own renderer
(collectors/ssacli/metrics.py), so the names and labels are the same, with the probe's own
three series. docs/fleet.md tells the rules: the allow-list (settings.py) before any
connection; a probe answered from its target's last read (a failed one too: a wrong password
is not retried at each scrape), which starts a new read in the background once
``min_interval_s`` has passed since the last login; a target's first probe waiting for its
read until ``timeout_s`` (or the scrape timeout less half a second).

Everything runs on the endpoint's event loop: a read is a coroutine, not a thread. At most
``max_sessions`` reads hold an iLO session at once; the others wait for one, MAX_WAITING
reads at most, beyond which no read is started and the probe gets the last answer, or fails
when there is none. One read per target and module at a time, ended ``refresh_timeout_s``
after it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs

from prometheus_client import generate_latest
from prometheus_client.core import Metric
from pydantic import ValidationError

from smartarray_agent.collectors.families import Families
from smartarray_agent.collectors.redfish.client import tls_context
from smartarray_agent.collectors.redfish.crawl import read_ilo
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.ssacli.metrics import families
from smartarray_agent.common.model import Snapshot
from smartarray_agent.probe.settings import ProbeConfig, Target, TargetPattern

log = logging.getLogger(__name__)

PATH = "/probe"
DEFAULT_MODULE = "default"
SCRAPE_TIMEOUT_HEADER = "x-prometheus-scrape-timeout-seconds"
SCRAPE_TIMEOUT_MARGIN_S = 0.5  # the answer's way back to Prometheus
MAX_WAITING = 10_000  # reads waiting for a session (a few kB each), under way included
HELP = {
    "smartarray_probe_success": "1 when the iLO was read, else 0.",
    "smartarray_probe_duration_seconds": "How long reading the iLO took.",
    "smartarray_probe_snapshot_age_seconds": "Seconds since the read this answer comes from "
                                             "ended.",
}
FORGET_S = 3600.0  # a target no probe asked about for this long (or min_interval_s) is dropped
FULL_LOG_S = 60.0  # a full waiting line is logged at most this often
CLOSE_WAIT_S = 10.0  # for the reads cancelled at a close to log out (2 s each) on a busy loop

Key = tuple[str, str]  # normalized host:port, module


@dataclass(frozen=True)
class ProbeAnswer:
    status: int
    body: bytes  # the exposition for a 200, else plain text saying why


@dataclass(frozen=True)
class _Read:
    """A read's result: the snapshot (None: it failed), when it ended, how long it took."""

    snapshot: Snapshot | None
    ended: float  # the prober's clock
    duration_s: float


@dataclass
class _Target:
    """One target and module: its last read, the read under way, when its last login began."""

    asked: float  # the last probe, on the prober's clock
    last: _Read | None = None
    reading: asyncio.Task[ProbeAnswer] | None = None  # waiting for a session or under way
    login_started: float | None = None


class Prober:
    """Answers ``/probe`` requests for ``config`` on one event loop; ``threshold_percent``
    is the interlock's, for ``smartarray_unprotected_write_cache``. ``clock``: monotonic,
    for the ages and intervals. :meth:`close` when done."""

    def __init__(self, config: ProbeConfig, threshold_percent: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.threshold_percent = threshold_percent
        self._clock = clock
        self._patterns = [TargetPattern.parse(pattern) for pattern in config.targets]
        self._sessions = asyncio.Semaphore(config.max_sessions)
        self._targets: dict[Key, _Target] = {}
        self._tls: dict[str, ssl.SSLContext] = {}  # by module: made once, shared by its reads
        self._waiting = 0  # reads started and not ended: at most MAX_WAITING
        self._closed = False
        # A full line is logged once a minute, with the refusals since: an undersized
        # prober refuses a read on almost every probe.
        self._full_logged_at: float | None = None
        self._full_unlogged = 0

    def close(self) -> None:
        """Start no read from now on, cancel those started and wait for them to log out (a
        reload swapped this prober out, or the endpoint stops). From another thread than
        the loop's."""
        self._closed = True
        reads = [target.reading for target in list(self._targets.values())
                 if target.reading is not None]
        if not reads:
            return

        async def cancelled() -> None:
            for read in reads:
                read.cancel()
            await asyncio.wait(reads, timeout=CLOSE_WAIT_S)

        with contextlib.suppress(RuntimeError):  # the loop has closed: nothing runs
            asyncio.run_coroutine_threadsafe(cancelled(), reads[0].get_loop()).result()

    async def respond(self, query: str, scrape_timeout: str | None = None) -> ProbeAnswer:
        """The answer to a probe with ``query`` (and Prometheus's scrape timeout header): a
        refusal, the last read's answer, or the first read's when it ends in time (it goes
        on otherwise, for the next probe)."""
        parsed = self._parse(query)
        if isinstance(parsed, ProbeAnswer):
            return parsed
        key, module = parsed
        timeout_s = self._timeout(scrape_timeout)
        now = self._clock()
        target = self._targets.get(key)
        if target is None:
            self._forget_old(now)
            target = self._targets[key] = _Target(now)
        target.asked = now
        if target.reading is None and (target.login_started is None or now
                                       - target.login_started >= self.config.min_interval_s):
            self._start_read(key, module, target, now)
        if target.last is not None:
            last = target.last
            return self.answer(last.snapshot, last.duration_s, now - last.ended)
        if (reading := target.reading) is None:  # no read could be started
            return self.answer(None, 0.0)
        await asyncio.wait([reading], timeout=timeout_s)
        if reading.done() and not reading.cancelled():
            return reading.result()
        return self.answer(None, timeout_s)

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
        return ProbeAnswer(200, generate_latest(_Fixed(found)))

    def _parse(self, query: str) -> tuple[Key, str] | ProbeAnswer:
        """The target and module, or the refusal: 400 (malformed), 403 (not allowed)."""
        try:
            params = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query),
                              max_num_fields=8)
        except ValueError:
            return _refused(400, "malformed query: use ?target=HOST[:PORT]&module=NAME")
        targets = params.get("target", [])
        modules = params.get("module", [DEFAULT_MODULE])
        if len(targets) != 1 or len(modules) != 1:
            return _refused(400, "give one target=HOST[:PORT] and at most one module=NAME")
        module = modules[0]
        if module not in self.config.modules:
            return _refused(400, f"unknown module {module[:64]!r}: "
                                 f"[probe.modules.NAME] names {', '.join(self.config.modules)}")
        try:
            target = Target.parse(targets[0])
        except ValueError as error:
            return _refused(400, f"target: {error}")
        if not any(pattern.admits(target) for pattern in self._patterns):
            return _refused(403, f"target {target} is not in [probe] targets")
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
        """Start a read of ``target`` unless the line is full or the prober closed."""
        if self._closed:
            return
        if self._waiting >= MAX_WAITING:
            if self._full_logged_at is not None and now - self._full_logged_at < FULL_LOG_S:
                self._full_unlogged += 1
                return
            log.warning("no read of %s queued: %d reads are waiting for an iLO session "
                        "([probe] max_sessions = %d; %d more refused since the last such "
                        "warning)", key[0], self._waiting, self.config.max_sessions,
                        self._full_unlogged)
            self._full_logged_at, self._full_unlogged = now, 0
            return
        target.reading = asyncio.create_task(self._read(key[0], module, target))
        self._waiting += 1

    def _forget_old(self, now: float) -> None:
        """Drop the targets no probe asked about for FORGET_S (and ``min_interval_s``): the
        allow-list's wildcards must not let the table grow without end."""
        after = max(FORGET_S, self.config.min_interval_s)
        for key in [key for key, target in self._targets.items()
                    if target.reading is None and now - target.asked >= after]:
            del self._targets[key]

    async def _read(self, host: str, module: str, target: _Target) -> ProbeAnswer:
        """Wait for a session, then read the iLO: its answer, also kept as the last read."""
        snapshot = None
        started = self._clock()
        try:
            async with self._sessions:
                started = target.login_started = self._clock()
                snapshot = await self._snapshot(host, module)
        finally:
            ended = self._clock()
            target.last = _Read(snapshot, ended, ended - started)
            target.reading = None
            self._waiting -= 1
        return self.answer(snapshot, ended - started, 0.0)

    async def _snapshot(self, host: str, module: str) -> Snapshot | None:
        """The iLO's snapshot; None, logged, when it cannot be read."""
        deadline = time.monotonic() + self.config.refresh_timeout_s  # the loop's clock
        try:
            settings = self.config.modules[module].at(host)
            if module not in self._tls:
                self._tls[module] = tls_context(settings)
            return await read_ilo(settings, deadline, self._tls[module])
        except RedfishError as error:
            log.warning("probe of %s (module %s) failed: %s", host, module, error)
        except ValidationError as error:  # the module's files changed since the config check
            log.warning("probe of %s (module %s): %s", host, module,
                        "; ".join(problem["msg"] for problem in error.errors()))
        except Exception:  # a bug must not stop the probes; it is logged in full
            log.exception("probe of %s (module %s) failed unexpectedly", host, module)
        return None


@dataclass(frozen=True)
class _Fixed:
    """A prometheus_client collector of families made beforehand."""

    found: list[Metric]

    def collect(self) -> list[Metric]:
        return self.found


def _refused(status: int, reason: str) -> ProbeAnswer:
    log.debug("/probe refused (%d): %s", status, reason)
    return ProbeAnswer(status, f"{reason}\n".encode())
