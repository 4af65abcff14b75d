"""The Nagios/Icinga plugin's judgement: a snapshot in, one status line and perfdata out.

Critical: failed (or otherwise not ok) backup power, unprotected write cache, a controller
or a drive not ok, a known charge below ``charge_critical``. Warning: backup power
recharging, a cache disabled or not ok, a known charge below ``charge_warning``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smartarray_agent.model import Controller, Snapshot
from smartarray_agent.policy import (
    backup_power_state,
    unprotected_write_cache,
    write_cache_active,
)

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
LABELS = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}
_HEALTHY_CACHE = (None, "ok", "not_configured")
_HEALTHY_DRIVE = (None, "ok")


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
    drives = sum(len(c.physical_drives) for c in snapshot.controllers)
    return f"{len(snapshot.controllers)} controller(s) ok, {drives} physical drive(s) ok"


def _controller(ctrl: Controller, limits: Thresholds, result: CheckResult) -> None:
    name = f"slot {ctrl.slot}" if ctrl.slot is not None else ctrl.model
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
    for kind, drives in (("logical", ctrl.logical_drives), ("physical", ctrl.physical_drives)):
        bad = [f"{d.drive_id} {d.status}" for d in drives if d.status not in _HEALTHY_DRIVE]
        if bad:
            result.raise_to(CRITICAL, f"{name} {kind} drive {', '.join(bad)}")
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
    failed = sum(1 for d in ctrl.physical_drives if d.status not in _HEALTHY_DRIVE)
    result.perfdata.append(f"'{label}_physical_drives_not_ok'={failed};;0;0")  # crit above 0
