"""The collectors a configuration asks for, in the order they run each round: the vendor
CLI always, the iLO when a ``[redfish]`` table is there, sysfs when enabled; and the guard,
which the daemon runs after each ssacli collection when the policy asks for it. A new
collector is one module implementing :class:`~smartarray_agent.collectors.base.Collector`
and one line in :func:`build_collectors`; its HELP texts join :func:`metric_help`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

# After a collection: act on what it shows; True when the hardware changed (collect again).
Enforce = Callable[[AnyCollector, Any], bool]


def build_collectors(config: Config) -> list[AnyCollector]:
    collectors: list[AnyCollector] = [SsacliCollector(
        lambda: open_runner(config.ssacli), Charge(config.redfish),
        config.policy.battery_threshold_percent)]
    if config.redfish is not None:
        collectors.append(RedfishCollector(config.redfish, collectors[0].charge))
    if config.sysfs.enabled:
        collectors.append(SysfsCollector())
    return collectors


def build_guard(config: Config, collectors: list[AnyCollector]) -> Enforce | None:
    """The guard over the ssacli collector of ``collectors``, when the policy turns it on:
    it judges with that collector's iLO charge and acts through its runner."""
    if not config.policy.disable_unprotected_write_cache:
        return None
    ssacli = next(c for c in collectors if isinstance(c, SsacliCollector))
    guard = Guard(config.audit.path, config.policy.battery_threshold_percent,
                  enrich=ssacli.charge.overlay)

    def enforce(collector: AnyCollector, snapshot: Any) -> bool:
        return collector is ssacli and guard.enforce(snapshot, ssacli.runner())

    return enforce


def metric_help() -> dict[str, str]:
    """Every metric the agent can export, with its HELP text (docs/metrics.md lists them)."""
    return {**render.HELP, **ssacli_metrics.HELP, **redfish_metrics.HELP, **sysfs.HELP}
