"""The iLO's battery charge (the CLI prints none), laid over CLI snapshots under one freshness
rule: a :class:`Charge` holds the last iLO reading and is the only place that lays it over a
snapshot (``overlay``, by merge.py's rules), while it is at most ``max_age_s`` old on the
monotonic clock. The daemon's Redfish collector feeds it (``update``); the one-off commands
read the iLO when they need it (``read``: a failure forgets the earlier reading, so what a
command judges is what it has just read). The exporter, the guard, ``status``, ``check`` and
the write path all judge through ``overlay``; the exposition is made again at ``expires_at``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the iLO client and its models load with the first reading
    from smartarray_agent.collectors.redfish.resources import Reading
    from smartarray_agent.collectors.redfish.settings import RedfishSettings
    from smartarray_agent.common.model import Controller, Snapshot


class Charge:
    """``settings``: the host's own iLO (None: none configured); ``clock``: the monotonic
    clock the readings are judged on."""

    def __init__(self, settings: RedfishSettings | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._reading: Reading | None = None
        # why the last read of the iLO failed; None after a successful one (or before any)
        self.error: str | None = None

    @property
    def configured(self) -> bool:
        """Whether a ``[redfish]`` table names an iLO to read."""
        return self.settings is not None

    def update(self, reading: Reading) -> None:
        """A new reading from the iLO (the daemon's Redfish collector)."""
        with self._lock:
            self._reading, self.error = reading, None

    def failed(self, error: str) -> None:
        """The last read failed; the previous reading keeps counting until it expires."""
        with self._lock:
            self.error = error

    def read(self) -> Reading | None:
        """Read the iLO now, on an event loop of its own (the one-off commands). A failure is
        kept in :attr:`error`, forgets the earlier reading and returns None. An iLO that
        answers with a charge it cannot mean (``null``, ``"50"``, 255) counts as not read:
        :attr:`error` says so."""
        if self.settings is None:
            return None
        from smartarray_agent.collectors.redfish.crawl import read_reading
        from smartarray_agent.collectors.redfish.errors import RedfishError

        try:
            reading = asyncio.run(read_reading(self.settings))
        except RedfishError as error:
            with self._lock:
                self._reading, self.error = None, str(error)
            return None
        unreadable = [b.charge_unreadable for b in reading.batteries
                      if b.charge_unreadable is not None]
        with self._lock:
            self._reading = reading
            self.error = (f"the iLO gave a battery charge that is not a number from 0 to 100 "
                          f"(ChargeLevelPercent {', '.join(unreadable)})" if unreadable else None)
        return reading

    def unread(self, ctrl: Controller) -> str | None:
        """Why the configured iLO gave ``ctrl`` (as :meth:`overlay` left it) no charge; None
        when it gave one, or when no iLO is configured. The write path judges an enable on
        such a controller as on an iLO that could not be read."""
        if self.settings is None or ctrl.backup_power.charge_percent is not None:
            return None
        if self.error is not None:
            return self.error
        return (f"the iLO answered but gave {ctrl.name} no battery charge: its battery could "
                "not be tied to this controller, or reports none (`smartarray-agent status` "
                "says which)")

    @property
    def read_at(self) -> float | None:
        """When the reading that counts now was taken, as Unix time, to be shown (its age on
        the monotonic clock, back from the wall clock's now); None without one."""
        with self._lock:
            reading = self._reading
        return None if reading is None else time.time() - (self._clock() - reading.taken_at)

    def overlay(self, snapshot: Snapshot, now: float | None = None) -> Snapshot:
        """``snapshot`` with the charge on the controllers the reading maps to, while the
        reading is fresh at ``now`` (monotonic; default: the clock's now); a notice says why
        no charge was laid. ``snapshot`` is not changed."""
        if self.settings is None or not snapshot.controllers:
            return snapshot
        with self._lock:
            reading, error = self._reading, self.error
        if reading is None:
            if error is None:
                return snapshot
            return snapshot.model_copy(update={"notices": [
                *snapshot.notices, f"redfish: no battery charge from the iLO: {error}"]})
        from smartarray_agent.collectors.redfish.merge import merge_charge

        when = self._clock() if now is None else now
        return merge_charge(snapshot, reading, when, self.settings.max_age_s)

    def expires_at(self) -> float | None:
        """When (monotonic) the current reading stops counting; None: nothing to expire."""
        with self._lock:
            reading = self._reading
        if reading is None or self.settings is None:
            return None
        return reading.taken_at + self.settings.max_age_s
