"""The guard, off by default (``[policy] disable_unprotected_write_cache = true``): when the
daemon sees no-battery write cache on while backup power is below the threshold, it turns
no-battery write cache off through the write path (same lock, same interlock, re-read and
verify, audit), as the user ``smartarray-agent (guard)``."""

from __future__ import annotations

import logging
from collections.abc import Callable

from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.model import Controller, Snapshot
from smartarray_agent.policy import backup_power_state
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import ChangeRequest, ChangeRunner, NoCharge, Target
from smartarray_agent.write.kinds import BadRequest, Change, Kind

log = logging.getLogger(__name__)

GUARD_USER = "smartarray-agent (guard)"
TURN_OFF = Change(Kind.NO_BATTERY_WRITE_CACHE, enable=False)


class Guard:
    def __init__(self, audit_file, threshold_percent: float,
                 enrich: Callable[[Snapshot], Snapshot]) -> None:
        self.audit = AuditLog(audit_file, user=GUARD_USER)
        self.threshold_percent = threshold_percent
        self.enrich = enrich

    def enforce(self, snapshot: Snapshot, runner: VendorRunner) -> bool:
        """Turn no-battery write cache off on every controller that needs it; True when it
        sent a change (the caller reads the controllers again)."""
        acted = False
        for ctrl in self.enrich(snapshot).controllers:
            if not self._exposed(ctrl):
                continue
            changer = ChangeRunner(runner, self.audit, self.threshold_percent,
                                   confirm=lambda question: True, charge=_Overlay(self.enrich))
            request = ChangeRequest(Target(slot=ctrl.slot), TURN_OFF, assume_yes=True)
            try:
                outcome = changer.apply(request)
            except BadRequest as error:
                log.error("guard: could not turn no-battery write cache off on %s: %s",
                          ctrl.name, error)
                continue
            acted = acted or outcome.verdict in ("changed", "unknown", "not_applied")
            if outcome.verdict in ("changed", "unchanged"):
                log.warning("guard: %s", outcome.message)
            else:
                log.error("guard: could not turn no-battery write cache off on %s: %s",
                          ctrl.name, outcome.message)
        return acted

    def _exposed(self, ctrl: Controller) -> bool:
        return (ctrl.slot is not None and ctrl.cache.no_battery_write_cache is True
                and not backup_power_state(ctrl, self.threshold_percent).protected)


class _Overlay(NoCharge):
    """The daemon's charge, as the guard judges with it (the daemon reads the iLO)."""

    def __init__(self, enrich: Callable[[Snapshot], Snapshot]) -> None:
        self.enrich = enrich

    def overlay(self, snapshot: Snapshot) -> Snapshot:
        return self.enrich(snapshot)
