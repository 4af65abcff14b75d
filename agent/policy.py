"""The write-cache interlock of DESIGN.md: may this change be made to this controller now?

Backup power is *at or above threshold* only when its status is ``ok`` and, where a charge
percentage is known, that percentage is at least the threshold, and the cache is not
disabled for a battery or capacitor reason. Anything else (recharging, failed, absent,
unknown) is below: the interlock fails closed.

=============================================  ======================  =====================
change                                          at/above threshold      below threshold
=============================================  ======================  =====================
any disable (nbwc off, dwc off, caching off)    allowed                 allowed
cache ratio, no-battery write cache off         allowed                 allowed, write cache
                                                                        stays inactive
cache ratio raising the write share, nbwc on    allowed                 refused
no-battery write cache on                       allowed, confirmation   refused
drive write cache on (any usage)                allowed, confirmation   refused
logical drive caching on, nbwc off              allowed                 allowed, write cache
                                                                        stays inactive
logical drive caching on, nbwc on               allowed                 refused
=============================================  ======================  =====================

The last two rows extend DESIGN.md's table: with no-battery write cache on, turning a
logical drive's caching on puts its writes in unprotected cache, like raising the ratio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from smartarray_agent.model import Controller

_BATTERY_REASON = re.compile(r"batter|capacitor|backup power|charge", re.I)


class Kind(StrEnum):
    CACHE_RATIO = "cache-ratio"
    NO_BATTERY_WRITE_CACHE = "no-battery-write-cache"
    DRIVE_WRITE_CACHE = "drive-write-cache"
    LOGICAL_DRIVE_CACHING = "logical-drive-caching"


@dataclass(frozen=True)
class Change:
    kind: Kind
    enable: bool | None = None  # the switches
    read_percent: int | None = None  # the cache ratio
    write_percent: int | None = None
    usage: str | None = None  # Gen10 drive write cache: configured, unconfigured, hba
    logical_drive: str | None = None

    def describe(self) -> str:
        if self.kind is Kind.CACHE_RATIO:
            return f"cache ratio {self.read_percent}/{self.write_percent}"
        what = {
            Kind.NO_BATTERY_WRITE_CACHE: "no-battery write cache",
            Kind.DRIVE_WRITE_CACHE: "drive write cache"
            + (f" ({self.usage} drives)" if self.usage else ""),
            Kind.LOGICAL_DRIVE_CACHING: f"caching of logical drive {self.logical_drive}",
        }[self.kind]
        return f"{what} {'on' if self.enable else 'off'}"


@dataclass(frozen=True)
class BackupPowerState:
    protected: bool  # at or above threshold
    summary: str  # "batteries ok, charge 93%" / "batteries recharging" / "absent"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    needs_confirmation: bool
    backup: BackupPowerState
    threshold_percent: float
    message: str


def backup_power_state(ctrl: Controller, threshold_percent: float) -> BackupPowerState:
    power, cache = ctrl.backup_power, ctrl.cache
    source = power.source or "backup power"
    if power.count == 0 or (power.source is None and power.status is None):
        return BackupPowerState(False, "absent or not reported")
    status = power.status or "unknown"
    summary = f"{source} {status}"
    if power.charge_percent is not None:
        summary += f", charge {power.charge_percent:g}%"
    if status != "ok":
        return BackupPowerState(False, summary)
    if power.charge_percent is not None and power.charge_percent < threshold_percent:
        return BackupPowerState(False, summary)
    if cache.status not in (None, "ok", "not_configured") and _BATTERY_REASON.search(
        cache.status_details or ""
    ):
        return BackupPowerState(False, f"{summary}, but cache {cache.status}: "
                                       f"{cache.status_details}")
    return BackupPowerState(True, summary)


def judge(ctrl: Controller, change: Change, threshold_percent: float) -> Verdict:
    backup = backup_power_state(ctrl, threshold_percent)
    nbwc_on = ctrl.cache.no_battery_write_cache is True

    def verdict(allowed: bool, confirm: bool, message: str) -> Verdict:
        return Verdict(allowed, confirm and allowed, backup, threshold_percent, message)

    exposes_writes = _exposes_writes(ctrl, change, nbwc_on)
    if exposes_writes is None:
        return verdict(True, False, "a disable is always allowed")
    if backup.protected:
        confirm = change.kind in (Kind.NO_BATTERY_WRITE_CACHE, Kind.DRIVE_WRITE_CACHE)
        return verdict(True, confirm, "backup power is at or above the threshold")
    if exposes_writes:
        return verdict(False, False, _refusal(ctrl, change, backup, threshold_percent))
    if nbwc_on:
        return verdict(True, False, "allowed: it does not raise the share of writes held in "
                                    "unprotected cache")
    return verdict(True, False, "allowed, but write cache stays inactive until backup power "
                                f"is back ({backup.summary})")


def _exposes_writes(ctrl: Controller, change: Change, nbwc_on: bool) -> bool | None:
    """None for a change that only takes cache away; else whether it would put writes in
    cache that no healthy backup power protects."""
    if change.kind is Kind.CACHE_RATIO:
        before = ctrl.cache.write_percent
        raising = before is None or (change.write_percent or 0) > before
        return nbwc_on and raising
    if not change.enable:
        return None
    if change.kind is Kind.LOGICAL_DRIVE_CACHING:
        return nbwc_on
    return True  # no-battery write cache on, drive write cache on


def _refusal(ctrl: Controller, change: Change, backup: BackupPowerState,
             threshold_percent: float) -> str:
    return (
        f"refused: {change.describe()} on {ctrl.name} would put writes in cache that no "
        f"healthy backup power protects; backup power is {backup.summary} (needs ok and "
        f"a charge of at least {threshold_percent:g}% where the charge is known)"
    )


def write_cache_active(ctrl: Controller) -> bool | None:
    """Whether the controller is caching writes now: a cache that is present and ``ok``, a
    write share above 0, and backup power ``ok`` or no-battery write cache forced on.
    ``None`` when the output did not say (no cache status printed)."""
    cache = ctrl.cache
    if cache.present is False:
        return False
    if cache.status is None:
        return None
    if cache.status != "ok" or not cache.write_percent:
        return False
    return ctrl.backup_power.status == "ok" or cache.no_battery_write_cache is True


def unprotected_write_cache(ctrl: Controller, threshold_percent: float) -> bool:
    """Whether write cache can hold data that no healthy backup power protects: controller
    write cache active on backup power below the threshold, or drive write cache on (a
    drive's own cache has no backup power at all)."""
    cache = ctrl.cache
    policy = cache.drive_write_cache_policy
    drive_cache_on = cache.drive_write_cache is True or (
        policy is not None and "enable" in (policy.configured, policy.unconfigured, policy.hba)
    )
    controller_cache = write_cache_active(ctrl) is True and not backup_power_state(
        ctrl, threshold_percent).protected
    return drive_cache_on or controller_cache
