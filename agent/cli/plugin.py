"""The Nagios/Icinga plugin's judgement: a snapshot in, one status line and perfdata out.

Critical: failed (or otherwise not ok) backup power, unprotected write cache, a controller
not ok, a failed drive, a known charge below ``charge_critical``. Warning: backup power
recharging, a cache disabled or not ok, a known charge below ``charge_warning``, a drive
degraded, rebuilding or in a state word this version does not know. A drive whose work is
in progress (expanding, erasing, being rebuilt onto) is fine. The drive classes are those of
:data:`smartarray_agent.model.LOGICAL_DRIVE_STATES` / ``PHYSICAL_DRIVE_STATES``, which the
alert rules and dashboards use too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smartarray_agent.model import (
    LOGICAL_DRIVE_STATES,
    PHYSICAL_DRIVE_STATES,
    Controller,
    LogicalDrive,
    PhysicalDrive,
    Snapshot,
    drive_class,
)
from smartarray_agent.moving import notes
from smartarray_agent.policy import (
    backup_power_state,
    unprotected_write_cache,
    write_cache_active,
)

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
LABELS = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}
_HEALTHY_CACHE = (None, "ok", "not_configured")
# the code each drive class raises; ok, progressing and no printed status raise nothing
DRIVE_CODES = {"failed": CRITICAL, "degraded": WARNING, "rebuilding": WARNING,
               "unknown": WARNING}


@dataclass(frozen=True)
class Thresholds:
    charge_warning: float = 90.0
    charge_critical: float = 80.0  # also the interlock's threshold for "protected"


@dataclass
class CheckResult:
    code: int = OK
    problems: list[str] = field(default_factory=list)
    perfdata: list[str] = field(default_factory=list)

    def raise_to(self, code: int, problem: str) -> None:
        self.code = max(self.code, code)
        self.problems.append(problem)

    def line(self, summary: str) -> str:
        text = "; ".join(self.problems) if self.problems else summary
        perf = " ".join(self.perfdata)
        return f"SMARTARRAY {LABELS[self.code]} - {text}" + (f" | {perf}" if perf else "")


def judge(snapshot: Snapshot, thresholds: Thresholds) -> CheckResult:
    result = CheckResult()
    if not snapshot.controllers:
        result.raise_to(UNKNOWN, "no Smart Array controller found")
        return result
    for ctrl in snapshot.controllers:
        _controller(ctrl, thresholds, result)
    return result


def summary(snapshot: Snapshot) -> str:
    """The OK line: the counts, and the drives that move or wear without a problem (an
    erase, an expansion, an SSD with little endurance left), which the line names."""
    drives = sum(len(c.physical_drives) for c in snapshot.controllers)
    text = f"{len(snapshot.controllers)} controller(s) ok, {drives} physical drive(s) ok"
    moving = [f"{_name(ctrl)} {note}" for ctrl in snapshot.controllers for note in notes(ctrl)
              if DRIVE_CODES.get(note.drive_class or "ok", OK) == OK]
    return "; ".join([text, *moving])


def _name(ctrl: Controller) -> str:
    return f"slot {ctrl.slot}" if ctrl.slot is not None else ctrl.model


def _controller(ctrl: Controller, limits: Thresholds, result: CheckResult) -> None:
    name = _name(ctrl)
    power, cache = ctrl.backup_power, ctrl.cache
    if ctrl.status not in (None, "ok"):
        result.raise_to(CRITICAL, f"{name} controller {ctrl.status}")
    if power.status == "recharging":
        result.raise_to(WARNING, f"{name} backup power recharging")
    elif power.status not in (None, "ok"):
        result.raise_to(CRITICAL, f"{name} backup power {power.status}")
    if power.charge_percent is not None:
        if power.charge_percent < limits.charge_critical:
            result.raise_to(CRITICAL, f"{name} backup power charge {power.charge_percent:g}%")
        elif power.charge_percent < limits.charge_warning:
            result.raise_to(WARNING, f"{name} backup power charge {power.charge_percent:g}%")
    if cache.status not in _HEALTHY_CACHE:
        result.raise_to(WARNING, f"{name} cache {cache.status}")
    if unprotected_write_cache(ctrl, limits.charge_critical):
        result.raise_to(CRITICAL, f"{name} write cache unprotected: "
                                  f"{_why_unprotected(ctrl, limits.charge_critical)}")
    for ld in ctrl.logical_drives:
        _drive(result, f"{name} logical drive", ld, LOGICAL_DRIVE_STATES)
    for pd in ctrl.physical_drives:
        _drive(result, f"{name} physical drive", pd, PHYSICAL_DRIVE_STATES)
    _perfdata(ctrl, name, limits, result)


def _why_unprotected(ctrl: Controller, threshold: float) -> str:
    """What makes the write cache unprotected, in the words an operator acts on."""
    cache = ctrl.cache
    policy = cache.drive_write_cache_policy
    reasons = []
    if cache.drive_write_cache is True:
        reasons.append("drive write cache on (a drive's own cache has no backup power)")
    if policy is not None:
        on = [usage for usage in ("configured", "unconfigured", "hba")
              if getattr(policy, usage) == "enable"]
        if on:
            reasons.append(f"drive write cache on for {', '.join(on)} drives (no backup "
                           "power)")
    if write_cache_active(ctrl) is True and not backup_power_state(ctrl, threshold).protected:
        forced = " (no-battery write cache on)" if cache.no_battery_write_cache else ""
        reasons.append(f"controller write cache active{forced} on backup power "
                       f"{backup_power_state(ctrl, threshold).summary}")
    return "; ".join(reasons)


def drive_code(states: dict[str, str], word: str | None) -> int:
    """The plugin code a drive state word raises."""
    return DRIVE_CODES.get(drive_class(states, word) or "ok", OK)


def _drive(
    result: CheckResult, what: str, drive: LogicalDrive | PhysicalDrive, states: dict[str, str]
) -> None:
    code = drive_code(states, drive.status)
    if code == OK:
        return
    state = drive.status if drive.status in states else f"in unknown state {drive.status!r}"
    progress = f" {drive.progress_percent:g}%" if drive.progress_percent is not None else ""
    result.raise_to(code, f"{what} {drive.drive_id} {state}{progress}")


def _perfdata(ctrl: Controller, name: str, limits: Thresholds, result: CheckResult) -> None:
    label = name.replace(" ", "")
    power, cache = ctrl.backup_power, ctrl.cache
    if power.charge_percent is not None:
        # Range "N:" alerts below N (the plugin guidelines' threshold syntax).
        result.perfdata.append(f"'{label}_charge'={power.charge_percent:g}%;"
                               f"{limits.charge_warning:g}:;{limits.charge_critical:g}:;0;100")
    if cache.write_percent is not None:
        result.perfdata.append(f"'{label}_cache_write'={cache.write_percent}%;;;0;100")
    active = write_cache_active(ctrl)
    if active is not None:
        result.perfdata.append(f"'{label}_write_cache_active'={int(active)};;;0;1")
    failed = sum(1 for d in ctrl.physical_drives
                 if drive_code(PHYSICAL_DRIVE_STATES, d.status) != OK)
    result.perfdata.append(f"'{label}_physical_drives_not_ok'={failed};;0;0")  # crit above 0
