"""The Redfish collector: one session per collection, a :class:`Reading` with its time.

Requests: ``Chassis/1`` (iLO 5 batteries), ``Systems/1`` only when the chassis has no battery
list (iLO 4 batteries), then ``Systems/1/SmartStorage/ArrayControllers`` and each member.
A service without the SmartStorage resources gives a reading with no controllers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client.core import Metric

from smartarray_agent.collectors.base import Collector
from smartarray_agent.collectors.redfish.client import RedfishClient
from smartarray_agent.collectors.redfish.errors import RedfishError, answers_read
from smartarray_agent.collectors.redfish.metrics import HELP, battery_families
from smartarray_agent.collectors.redfish.resources import (
    ArrayController,
    Battery,
    Reading,
    array_controller,
    chassis_batteries,
    members,
    system_batteries,
)
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.redfish.snapshot import ARRAY_CONTROLLERS, CHASSIS, SYSTEM

if TYPE_CHECKING:
    from smartarray_agent.collectors.charge import Charge


def read_reading(settings: RedfishSettings, clock: Callable[[], float] = time.time) -> Reading:
    """One session with the iLO. Raises :class:`RedfishError` (one line, never a password)."""
    notices: list[str] = []
    with (RedfishClient(settings) as client,
          answers_read(f"{settings.host}:{settings.port}")):
        batteries = _batteries(client, notices)
        controllers = _controllers(client, notices)
    return Reading(taken_at=clock(), batteries=batteries, controllers=controllers, notices=notices)


class RedfishCollector(Collector[Reading]):
    """Runs on its own, slower schedule (``interval_s``) and hands every reading to the
    :class:`~smartarray_agent.collectors.charge.Charge`, which lays it over the CLI's
    snapshots. Its families are the battery's own (collectors/redfish/metrics.py)."""

    name = "redfish"
    HELP = HELP

    def __init__(
        self, settings: RedfishSettings, charge: Charge, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.charge = charge
        self.clock = clock
        self.interval_s: float | None = settings.interval_s

    def collect(self) -> Reading:
        try:
            reading = read_reading(self.settings, self.clock)
        except RedfishError as error:
            self.charge.failed(str(error))
            raise
        self.charge.update(reading)
        return reading

    def families(self, data: Reading, now: float) -> list[Metric]:
        return battery_families(data, now, self.settings.max_age_s)

    def changes_at(self, data: Reading) -> float | None:
        """When the reading's charge expires."""
        return data.taken_at + self.settings.max_age_s

    def summary(self, data: Reading) -> str:
        n = len(data.batteries)
        return f"{n} batter" + ("y" if n == 1 else "ies")


def _batteries(client: RedfishClient, notices: list[str]) -> list[Battery]:
    found = chassis_batteries(client.get(CHASSIS))
    if found is None:
        found = system_batteries(client.get(SYSTEM))
    if found is None:
        notices.append("the iLO lists no Smart Storage Battery (no Oem battery data in "
                       "Chassis/1 or Systems/1)")
        return []
    return found


def _controllers(client: RedfishClient, notices: list[str]) -> list[ArrayController]:
    collection = client.get_optional(ARRAY_CONTROLLERS)
    if collection is None:
        notices.append("the iLO has no SmartStorage ArrayControllers resource")
        return []
    return [array_controller(path, client.get(path))
            for path in members(collection, ARRAY_CONTROLLERS)]
