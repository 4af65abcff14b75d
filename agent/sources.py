"""The collectors a configuration asks for: ssacli always, sysfs when enabled."""

from __future__ import annotations

from smartarray_agent.collectors.ssacli.collector import CollectionError, SsacliCollector
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli, find_cli
from smartarray_agent.collectors.sysfs import SysfsCollector

from .collection import Collector
from .config import Config, SsacliConfig


def build_collectors(config: Config) -> list[Collector]:
    collectors: list[Collector] = [SsacliSource(config.ssacli)]
    if config.sysfs.enabled:
        collectors.append(SysfsCollector())
    return collectors


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

    def __init__(self, config: SsacliConfig) -> None:
        self.config = config
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
        return self._collector.collect()

    def close(self) -> None:
        if self._collector is not None:
            self._collector.close()
            self._collector = None
