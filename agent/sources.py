"""The collectors a configuration asks for, in the order they run each round, and what the
daemon does after each ssacli collection (reconcile unfinished changes; the guard when the
policy asks). A collector is a class implementing
:class:`~smartarray_agent.collectors.base.Collector` plus its line in :data:`COLLECTORS`;
it takes the settings it needs, never the agent's configuration (docs/layout.md)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from smartarray_agent.collectors.base import AnyCollector
from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.ssacli.collector import SsacliCollector
from smartarray_agent.collectors.ssacli.lock import LockError
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.config import Config
from smartarray_agent.exporter import render
from smartarray_agent.probe import prober
from smartarray_agent.vendor import open_runner
from smartarray_agent.write.audit import AuditError, AuditLog
from smartarray_agent.write.change import ChangeRunner
from smartarray_agent.write.collector import AuditCollector
from smartarray_agent.write.guard import Guard

log = logging.getLogger(__name__)

DAEMON_USER = "smartarray-agent (daemon)"


# Each collector class with its build from the configuration and the iLO's charge (None:
# not wanted), in the order they run each round: the audit collector runs after the ssacli
# one, whose round reconciles what it can.
COLLECTORS: tuple[tuple[Any, Callable[[Config, Charge], AnyCollector | None]], ...] = (
    # always: the vendor CLI is what the agent is for
    (SsacliCollector, lambda config, charge: SsacliCollector(
        lambda: open_runner(config.ssacli, service=True), charge,
        config.policy.battery_threshold_percent)),
    # with a [redfish] table that names the host's own iLO
    (RedfishCollector, lambda config, charge: None if config.own_ilo is None
     else RedfishCollector(config.own_ilo, charge)),
    # unless [sysfs] enabled = false
    (SysfsCollector, lambda config, charge: SysfsCollector() if config.sysfs.enabled else None),
    # always: every daemon may meet a change that was killed mid-way
    (AuditCollector, lambda config, charge: AuditCollector(config.audit.path)),
)

# After a collection: act on what it shows; True when the hardware changed (collect again).
Enforce = Callable[[AnyCollector, Any], bool]


def build_collectors(config: Config) -> list[AnyCollector]:
    """One of each kind the configuration wants, sharing the iLO's charge."""
    charge = Charge(config.own_ilo)
    built = (build(config, charge) for _, build in COLLECTORS)
    return [collector for collector in built if collector is not None]


def build_enforce(config: Config, collectors: list[AnyCollector]) -> Enforce:
    """After each collection of the ssacli collector, through its runner: reconcile the
    unfinished changes (write/reconcile.py), then the guard when the policy turns it on."""
    ssacli = next(c for c in collectors if isinstance(c, SsacliCollector))
    threshold = config.policy.battery_threshold_percent
    guard = (Guard(config.audit.path, threshold, ssacli.charge)
             if config.policy.disable_unprotected_write_cache else None)
    audit = AuditLog(config.audit.path, user=DAEMON_USER)

    def enforce(collector: AnyCollector, snapshot: Any) -> bool:
        if collector is not ssacli:
            return False
        _reconcile(ChangeRunner(ssacli.runner(), audit, threshold, confirm=lambda _: False))
        return guard is not None and guard.enforce(snapshot, ssacli.runner())

    return enforce


def _reconcile(changer: ChangeRunner) -> None:
    """Reconcile and log each change closed; a failure is a warning, tried again next round."""
    try:
        changer.reconcile()
    except (AuditError, LockError) as error:
        log.warning("unfinished changes not reconciled: %s", error)
    for message in changer.reconciled:
        log.warning("%s", message)


def metric_help() -> dict[str, str]:
    """Every metric the agent can export (``/probe``'s too), with its HELP text."""
    texts = {**render.HELP, **prober.HELP}
    for kind, _ in COLLECTORS:
        texts.update(kind.HELP)
    return texts
