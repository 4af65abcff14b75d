"""The collectors a configuration asks for: ssacli always, Redfish when a ``[redfish]``
table is there, sysfs when enabled."""

from __future__ import annotations

import time
from collections.abc import Callable

from smartarray_agent.collectors.base import Collector
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.redfish.merge import merge_charge
from smartarray_agent.collectors.ssacli.collector import CollectionError, SsacliCollector
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli, find_cli
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.config import Config, SsacliConfig
from smartarray_agent.model import Snapshot
from smartarray_agent.write.guard import Guard


def build_collectors(config: Config) -> list[Collector]:
    redfish = RedfishCollector(config.redfish) if config.redfish is not None else None
    guard = None
    if config.policy.disable_unprotected_write_cache:
        guard = Guard(config.audit.path, config.policy.battery_threshold_percent,
                      enrich=_with_charge(redfish))
    collectors: list[Collector] = [SsacliSource(config.ssacli, guard)]
    if redfish is not None:
        collectors.append(redfish)
    if config.sysfs.enabled:
        collectors.append(SysfsCollector())
    return collectors


def _with_charge(redfish: RedfishCollector | None) -> Callable[[Snapshot], Snapshot]:
    """The guard judges with the last fresh iLO charge, as the exposition does."""

    def enrich(snapshot: Snapshot) -> Snapshot:
        if redfish is None or redfish.last is None:
            return snapshot
        return merge_charge(snapshot, redfish.last, time.time(), redfish.settings.max_age_s)

    return enrich


def vendor_cli(config: SsacliConfig) -> VendorCli:
    """The simulator for ``simulate``, else ``path``, else the discovered CLI. Raises
    CliNotFound or ScenarioError."""
    if config.simulate is not None:
        from smartarray_agent.collectors import simulator

        return VendorCli(tuple(simulator.vendor_argv(config.simulate)), "simulator")
    return find_cli(str(config.path) if config.path is not None else None)


class SsacliSource:
    """The ssacli collector, created at the first collection that finds the vendor CLI: an
    agent started before ``ssacli`` was installed reports the missing CLI as a failed
    collection, and picks the CLI up once it is there.

    Sample metric lines (agent/metrics.py, docs/metrics.md)::

        smartarray_collector_success{collector="ssacli"} 1.0
        smartarray_cache_status{controller="0",state="ok"} 1.0
        smartarray_backup_power_status{controller="0",state="failed"} 1.0
        smartarray_unprotected_write_cache{controller="0"} 1.0
    """

    name = "ssacli"

    def __init__(self, config: SsacliConfig, guard: Guard | None = None) -> None:
        self.config = config
        self.guard = guard
        self._collector: SsacliCollector | None = None

    def collect(self):
        if self._collector is None:
            from smartarray_agent.collectors.simulator import ScenarioError

            try:
                cli = vendor_cli(self.config)
            except (CliNotFound, ScenarioError) as error:
                message = "; ".join(line.strip() for line in str(error).splitlines())
                raise CollectionError(message) from error
            self._collector = SsacliCollector(
                cli,
                timeout_s=self.config.timeout_s,
                lock_path=self.config.lock_path,
                lock_wait_s=self.config.lock_wait_s,
                console=self.config.console,
            )
        snapshot = self._collector.collect()
        if self.guard is not None and self.guard.enforce(snapshot, self._collector.runner):
            snapshot = self._collector.collect()  # what the controllers show now
        return snapshot

    def close(self) -> None:
        if self._collector is not None:
            self._collector.close()
            self._collector = None
