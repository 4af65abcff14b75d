"""Collectors for tests that render results without collecting: each is the real collector,
with a runner that is never opened."""

from __future__ import annotations

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli.collector import SsacliCollector
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.exporter.render import Entry


def _never() -> VendorRunner:
    raise AssertionError("this test renders results; it never runs the CLI")


def ssacli(threshold_percent: float = 80.0, charge: Charge | None = None) -> SsacliCollector:
    return SsacliCollector(_never, charge or Charge(None), threshold_percent)


def ssacli_entries(*results: CollectorResult, threshold_percent: float = 80.0) -> list[Entry]:
    collector = ssacli(threshold_percent)
    return [(collector, result) for result in results]
