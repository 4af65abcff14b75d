"""The Redfish collector: one read of the iLO's batteries and array controllers per
collection (crawl.py's :func:`~smartarray_agent.collectors.redfish.crawl.read_reading`, on an
event loop of its own), handed to the charge."""

from __future__ import annotations

import asyncio

from prometheus_client.core import Metric

from smartarray_agent.collectors.base import Collector
from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.redfish.crawl import read_reading
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.metrics import HELP, battery_families
from smartarray_agent.collectors.redfish.resources import Reading
from smartarray_agent.collectors.redfish.settings import RedfishSettings


class RedfishCollector(Collector[Reading]):
    """Runs on its own, slower schedule (``interval_s``) and hands every reading to the
    :class:`Charge`, which lays it over the CLI's snapshots. Its families are the battery's
    own (metrics.py)."""

    name = "redfish"
    HELP = HELP

    def __init__(self, settings: RedfishSettings, charge: Charge) -> None:
        self.settings = settings
        self.charge = charge
        self.interval_s: float | None = settings.interval_s

    def collect(self) -> Reading:
        try:
            reading = asyncio.run(read_reading(self.settings))
        except RedfishError as error:
            self.charge.failed(str(error))
            raise
        self.charge.update(reading)
        return reading

    def families(self, data: Reading, now: float) -> list[Metric]:
        return battery_families(data, now, self.settings.max_age_s)

    def changes_at(self, data: Reading) -> float | None:
        """When (monotonic) the reading's charge expires."""
        return data.taken_at + self.settings.max_age_s

    def summary(self, data: Reading) -> str:
        n = len(data.batteries)
        return f"{n} batter" + ("y" if n == 1 else "ies")
