"""The collectors a configuration asks for, in the order they run each round (the vendor CLI
always, the iLO with a ``[redfish]`` table, sysfs unless disabled), and the guard, which the
daemon runs after each ssacli collection when the policy asks for it.

A collector is one module with a class implementing
:class:`~smartarray_agent.collectors.base.Collector`, plus its line in :data:`COLLECTORS`:
its ``from_config`` says whether a configuration wants it, and its ``HELP`` joins
:func:`metric_help`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smartarray_agent.charge import Charge
from smartarray_agent.collectors.base import AnyCollector
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.ssacli.collector import SsacliCollector
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.config import Config
from smartarray_agent.exporter import render
from smartarray_agent.write.guard import Guard

COLLECTORS = (SsacliCollector, RedfishCollector, SysfsCollector)

# After a collection: act on what it shows; True when the hardware changed (collect again).
Enforce = Callable[[AnyCollector, Any], bool]


def build_collectors(config: Config) -> list[AnyCollector]:
    """One collector of each kind the configuration wants; they share the iLO's charge."""
    charge = Charge(config.redfish)
    built = (kind.from_config(config, charge) for kind in COLLECTORS)
    return [collector for collector in built if collector is not None]


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
    texts = dict(render.HELP)
    for kind in COLLECTORS:
        texts.update(kind.HELP)
    return texts
