"""The guard: the daemon turns no-battery write cache off through the write path when backup
power cannot protect it (docs/agent.md, "The guard")."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.common.policy import backup_power_state
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import ChangeRunner, Result
from smartarray_agent.write.kinds import BadRequest, Change, Kind, Target

log = logging.getLogger(__name__)

GUARD_USER = "smartarray-agent (guard)"
FIRST_BACKOFF_S = 60.0
MAX_BACKOFF_S = 3600.0
TURN_OFF = Change(Kind.NO_BATTERY_WRITE_CACHE, enable=False)


@dataclass
class _Failing:
    reason: str
    retry_at: float  # monotonic
    backoff_s: float


class Guard:
    def __init__(self, audit_file: Path, threshold_percent: float, charge: Charge,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.audit = AuditLog(audit_file, user=GUARD_USER)
        self.threshold_percent = threshold_percent
        self.charge = charge
        self._monotonic = monotonic
        self._failing: dict[str, _Failing] = {}  # by slot

    def enforce(self, snapshot: Snapshot, runner: VendorRunner) -> bool:
        """Turn no-battery write cache off on every controller that needs it; True when it
        sent a change (the caller reads the controllers again)."""
        acted = False
        for ctrl in self.charge.overlay(snapshot).controllers:
            if not self._exposed(ctrl) or not self._due(ctrl):
                continue
            changer = ChangeRunner(runner, self.audit, self.threshold_percent,
                                   confirm=lambda question: True, charge=self.charge)
            try:
                [outcome] = changer.apply(TURN_OFF, Target(slot=ctrl.slot), assume_yes=True)
            except BadRequest as error:
                self._failed(ctrl, str(error))
                continue
            acted = acted or outcome.result in (Result.CHANGED, Result.UNKNOWN,
                                                Result.NOT_APPLIED)
            if outcome.result in (Result.CHANGED, Result.UNCHANGED):
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
