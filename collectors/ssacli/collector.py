"""The ssacli collector: one ``ctrl all show config detail`` a collection, plus ``ctrl all
show detail`` only when a controller's block came back without its own fields (some firmware
prints a short config section). Its runner is opened at the first collection that finds the
CLI: one installed after the agent started is picked up. Its metric families carry the iLO's
charge while it is fresh (collectors/charge.py)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client.core import Metric

from smartarray_agent.collectors.base import CollectionError, Collector
from smartarray_agent.collectors.charge import Charge
from smartarray_agent.collectors.ssacli import commands, metrics
from smartarray_agent.collectors.ssacli.errors import ParseError, SsacliError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Snapshot

CONFIG_DETAIL = commands.show_config()
DETAIL = ["ctrl", "all", "show", "detail"]
_FROM_DETAIL = ("serial", "firmware", "status", "mode", "cache", "backup_power", "temperatures",
                "raw")


def read_snapshot(runner: VendorRunner) -> Snapshot:
    """Every controller, read in one job (whose console's banner tells the version) and
    parsed after it, the CLI free again. Raises CollectionError (one line)."""
    try:
        with runner.session():
            output, version = runner.run(CONFIG_DETAIL), runner.version()
        snapshot = _parsed(CONFIG_DETAIL, output)
        if any(not c.raw for c in snapshot.controllers):
            _fill_from(snapshot, _parsed(DETAIL, runner.run(DETAIL)))
        snapshot.cli_version = snapshot.cli_version or version
    except SsacliError as error:
        raise CollectionError(str(error)) from error
    return snapshot


class SsacliCollector(Collector[Snapshot]):
    name = "ssacli"
    interval_s: float | None = None
    HELP = metrics.HELP

    def __init__(
        self,
        open_runner: Callable[[], VendorRunner],
        charge: Charge,
        threshold_percent: float,
    ) -> None:
        """``open_runner`` raises CollectionError while there is no CLI to run."""
        self._open_runner = open_runner
        self._runner: VendorRunner | None = None
        self.charge = charge
        self.threshold_percent = threshold_percent

    def runner(self) -> VendorRunner:
        """This collector's runner, the daemon's guard's too; CollectionError while there is
        no CLI to run."""
        if self._runner is None:
            self._runner = self._open_runner()
        return self._runner

    def collect(self) -> Snapshot:
        return read_snapshot(self.runner())

    def families(self, data: Snapshot, now: float) -> list[Metric]:
        return metrics.families(self.charge.overlay(data, now), self.threshold_percent)

    def changes_at(self, data: Snapshot) -> float | None:
        return self.charge.expires_at()

    def summary(self, data: Snapshot) -> str:
        n = len(data.controllers)
        return f"{n} controller" + ("" if n == 1 else "s")


def _parsed(command: list[str], output: str) -> Snapshot:
    try:
        return parse(output)
    except ParseError as error:
        raise CollectionError(f"{' '.join(command)}: {error}") from error


def _fill_from(snapshot: Snapshot, detail: Snapshot) -> None:
    by_identity = {(c.model, c.slot): c for c in detail.controllers}
    for ctrl in snapshot.controllers:
        source = by_identity.get((ctrl.model, ctrl.slot))
        if source is not None and not ctrl.raw:
            for field in _FROM_DETAIL:
                setattr(ctrl, field, getattr(source, field))
