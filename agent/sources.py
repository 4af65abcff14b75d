"""The collectors a configuration asks for, and what the daemon does after each ssacli
collection (docs/layout.md says how a collector is added)."""

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
from smartarray_agent.vendor import open_runner
from smartarray_agent.write.audit import AuditError, AuditLog
from smartarray_agent.write.change import ChangeRunner
from smartarray_agent.write.collector import AuditCollector
from smartarray_agent.write.guard import Guard

log = logging.getLogger(__name__)

DAEMON_USER = "smartarray-agent (daemon)"

# After a collection: act on what it shows; True when the hardware changed (collect again).
Enforce = Callable[[AnyCollector, Any], bool]


def build_collectors(config: Config) -> list[AnyCollector]:
    """The collectors the configuration wants, sharing the iLO's charge, in the order they
    run each round: the audit collector after the ssacli one, whose round reconciles what it
    can."""
    charge = Charge(config.own_ilo)
    # always: the vendor CLI is what the agent is for
    collectors: list[AnyCollector] = [SsacliCollector(
        lambda: open_runner(config.ssacli, service=True), charge,
        config.policy.battery_threshold_percent)]
    if config.own_ilo is not None:  # a [redfish] table that names the host's own iLO
        collectors.append(RedfishCollector(config.own_ilo, charge))
    if config.sysfs.enabled:
        collectors.append(SysfsCollector())
    # always: every daemon may meet a change that was killed mid-way
    return [*collectors, AuditCollector(config.audit.path)]


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
