"""The iLO's battery charge for the one-off commands (status, check, the write path).

The daemon collects Redfish on its own schedule (agent/sources.py); a command reads the iLO
once, before it takes the CLI lock, and lays the reading over every snapshot it reads. A
Redfish failure is a warning: the command goes on with the CLI's status alone, which the
interlock treats as stricter, never looser.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.merge import merge_charge
from smartarray_agent.collectors.redfish.resources import Reading
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.model import Snapshot


class ChargeSource:
    def __init__(self, settings: RedfishSettings | None, warn: Callable[[str], None]) -> None:
        self.settings = settings
        self._warn = warn
        self._reading: Reading | None = None
        self._read = False

    def prefetch(self) -> None:
        """Read the iLO now (before taking the CLI lock), not at the first snapshot."""
        self._reading_once()

    def apply(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with the iLO's charge on the controllers it maps to, when fresh."""
        if self.settings is None or not snapshot.controllers:
            return snapshot
        reading = self._reading_once()
        if reading is None:
            return snapshot
        return merge_charge(snapshot, reading, time.time(), self.settings.max_age_s)

    def _reading_once(self) -> Reading | None:
        if not self._read and self.settings is not None:
            self._read = True
            try:
                self._reading = RedfishCollector(self.settings).collect()
            except RedfishError as error:
                self._warn(f"no battery charge from the iLO: {error}")
        return self._reading
