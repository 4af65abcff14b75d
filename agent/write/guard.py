"""The guard, off by default (``[policy] disable_unprotected_write_cache = true``): when the
daemon sees no-battery write cache on while backup power is below the threshold, it turns
no-battery write cache off through the write path (same lock, same interlock, re-read and
verify, audit), as the user ``smartarray-agent (guard)``.

A controller it could not fix (the audit file cannot be written, the CLI refused) is tried
again after a back-off that doubles from one minute to an hour, and logged as an error only
at the first failure and when the reason changes, not every round."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.common.policy import backup_power_state
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import ChangeRequest, ChangeRunner, Target
from smartarray_agent.write.kinds import BadRequest, Change, Kind

log = logging.getLogger(__name__)

GUARD_USER = "smartarray-agent (guard)"
FIRST_BACKOFF_S = 60.0
MAX_BACKOFF_S = 3600.0


@dataclass
class _Failing:
    reason: str
    retry_at: float  # monotonic
    backoff_s: float
TURN_OFF = Change(Kind.NO_BATTERY_WRITE_CACHE, enable=False)


class Guard:
    def __init__(self, audit_file, threshold_percent: float,
                 enrich: Callable[[Snapshot], Snapshot],
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.audit = AuditLog(audit_file, user=GUARD_USER)
        self.threshold_percent = threshold_percent
        self.enrich = enrich
        self._monotonic = monotonic
        self._failing: dict[str, _Failing] = {}  # by slot

    def enforce(self, snapshot: Snapshot, runner: VendorRunner) -> bool:
        """Turn no-battery write cache off on every controller that needs it; True when it
        sent a change (the caller reads the controllers again)."""
        acted = False
        for ctrl in self.enrich(snapshot).controllers:
            if not self._exposed(ctrl) or not self._due(ctrl):
                continue
            changer = ChangeRunner(runner, self.audit, self.threshold_percent,
                                   confirm=lambda question: True, charge=_Overlay(self.enrich))
            request = ChangeRequest(Target(slot=ctrl.slot), TURN_OFF, assume_yes=True)
            try:
                outcome = changer.apply(request)
            except BadRequest as error:
                self._failed(ctrl, str(error))
                continue
            acted = acted or outcome.verdict in ("changed", "unknown", "not_applied")
            if outcome.verdict in ("changed", "unchanged"):
                self._failing.pop(str(ctrl.slot), None)
                log.warning("guard: %s", outcome.message)
            else:
                self._failed(ctrl, outcome.message)
        return acted

    def _due(self, ctrl: Controller) -> bool:
        failing = self._failing.get(str(ctrl.slot))
        return failing is None or self._monotonic() >= failing.retry_at

    def _failed(self, ctrl: Controller, reason: str) -> None:
        """Back off: the next try after twice the last wait (1 min to 1 h); an error in the
        log at the first failure and when the reason changes, a debug line otherwise."""
        slot = str(ctrl.slot)
        before = self._failing.get(slot)
        backoff = FIRST_BACKOFF_S if before is None else min(before.backoff_s * 2,
                                                             MAX_BACKOFF_S)
        self._failing[slot] = _Failing(reason, self._monotonic() + backoff, backoff)
        report = log.error if before is None or before.reason != reason else log.debug
        report("guard: could not turn no-battery write cache off on %s: %s (next try in "
               "%.0f s)", ctrl.name, reason, backoff)

    def _exposed(self, ctrl: Controller) -> bool:
        return (ctrl.slot is not None and ctrl.cache.no_battery_write_cache is True
                and not backup_power_state(ctrl, self.threshold_percent).protected)


class _Overlay(Charge):
    """The daemon's charge, as the guard judges with it (the daemon reads the iLO)."""

    def __init__(self, enrich: Callable[[Snapshot], Snapshot]) -> None:
        super().__init__(None)
        self.enrich = enrich

    def overlay(self, snapshot: Snapshot, now: float | None = None) -> Snapshot:
        return self.enrich(snapshot)
