"""The collectors a configuration asks for, in the order they run each round: the vendor
CLI always, the iLO when a ``[redfish]`` table is there, sysfs when enabled. A new collector
is one module implementing :class:`~smartarray_agent.collectors.base.Collector` and one line
here, and its HELP texts in :func:`metric_help`."""

from __future__ import annotations

from smartarray_agent.charge import Charge
from smartarray_agent.collectors import sysfs
from smartarray_agent.collectors.base import AnyCollector
from smartarray_agent.collectors.redfish import metrics as redfish_metrics
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.ssacli import metrics as ssacli_metrics
from smartarray_agent.collectors.ssacli.collector import SsacliCollector
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.config import Config
from smartarray_agent.exporter import render
from smartarray_agent.vendor import open_runner
from smartarray_agent.write.guard import Guard


def build_collectors(config: Config) -> list[AnyCollector]:
    charge = Charge(config.redfish)
    threshold = config.policy.battery_threshold_percent
    guard = None
    if config.policy.disable_unprotected_write_cache:
        guard = Guard(config.audit.path, threshold, enrich=charge.overlay)
    collectors: list[AnyCollector] = [
        SsacliCollector(lambda: open_runner(config.ssacli), charge, threshold, guard)
    ]
    if config.redfish is not None:
        collectors.append(RedfishCollector(config.redfish, charge))
    if config.sysfs.enabled:
        collectors.append(SysfsCollector())
    return collectors


def metric_help() -> dict[str, str]:
    """Every metric the agent can export, with its HELP text (docs/metrics.md lists them)."""
    return {**render.HELP, **ssacli_metrics.HELP, **redfish_metrics.HELP, **sysfs.HELP}
