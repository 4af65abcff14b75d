"""The write-cache interlock: may this change be made to this controller now? docs/cli.md,
"The interlock", has its table; each change kind carries its row (:class:`Row`) in
:mod:`smartarray_agent.write.kinds`. Backup power is at or above threshold only when its
status is exactly ``OK``, a known charge is at least the threshold and the cache is not
disabled for a battery reason; anything else fails closed, and a no-battery write cache
switch the CLI did not print counts as possibly on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from smartarray_agent.common.model import BackupPower, Controller

_BATTERY_REASON = re.compile(r"batter|capacitor|backup power|charge", re.I)


class Exposure(StrEnum):  # when a change that adds cache exposes writes, below threshold

    ALWAYS = "always"  # no-battery write cache on, drive write cache on
    WITH_NBWC = "with-nbwc"  # only while no-battery write cache is on (or not known to be off)


@dataclass(frozen=True)
class Row:  # a change kind's row of the interlock table
    exposure: Exposure
    confirm: bool  # an allowed change that adds cache asks the operator first


class Judged(Protocol):  # what the interlock needs to know of a change
    @property
    def row(self) -> Row: ...

    def adds_cache(self, ctrl: Controller) -> bool: ...

    def describe(self) -> str: ...


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


def backup_power_healthy(power: BackupPower) -> bool:
    """Status ``ok`` as printed exactly ``OK``: ``OK (...)`` keeps a tail we cannot judge."""
    return power.status == "ok" and (power.status_text is None
                                     or power.status_text.strip().upper() == "OK")


def backup_power_state(ctrl: Controller, threshold_percent: float,
                       charge_error: str | None = None) -> BackupPowerState:
    """``charge_error``: why the configured iLO could not be read (a charge that should be
    known is not: not at threshold)."""
    power, cache = ctrl.backup_power, ctrl.cache
    source = power.source or "backup power"
    if power.count == 0 or (power.source is None and power.status is None):
        return BackupPowerState(False, "absent or not reported")
    healthy = backup_power_healthy(power)
    status = power.status_text if power.status == "ok" and not healthy else power.status
    summary = f"{source} {status or 'unknown'}"
    if power.charge_percent is not None:
        summary += f", charge {percent(power.charge_percent)}%"
    if not healthy:
        return BackupPowerState(False, summary)
    if power.charge_percent is not None and power.charge_percent < threshold_percent:
        return BackupPowerState(False, summary)
    if cache.status not in (None, "ok", "not_configured") and _BATTERY_REASON.search(
        cache.status_details or ""
    ):
        return BackupPowerState(False, f"{summary}, but cache {cache.status}: "
                                       f"{cache.status_details}")
    if charge_error is not None and power.charge_percent is None:
        return BackupPowerState(False, f"{summary}, charge unknown (the iLO could not be "
                                       f"read: {charge_error})")
    return BackupPowerState(True, summary)


def percent(value: float) -> str:
    """A percentage as it was judged: 79.99999 stays 79.99999, never rounded up to 80."""
    return f"{value:.15g}"


def judge(ctrl: Controller, change: Judged, threshold_percent: float,
          charge_error: str | None = None) -> Verdict:
    backup = backup_power_state(ctrl, threshold_percent, charge_error)
    nbwc = ctrl.cache.no_battery_write_cache

    def verdict(allowed: bool, confirm: bool, message: str) -> Verdict:
        return Verdict(allowed, confirm and allowed, backup, threshold_percent, message)

    adds = change.adds_cache(ctrl)
    if backup.protected:
        return verdict(True, adds and change.row.confirm,
                       "backup power is at or above the threshold")
    if not adds:
        return verdict(True, False, "a change that takes cache away is always allowed")
    exposes = change.row.exposure is Exposure.ALWAYS or nbwc is not False
    if exposes:
        return verdict(False, False, _refusal(ctrl, change, backup, threshold_percent))
    return verdict(True, False, "allowed, but write cache stays inactive until backup power "
                                f"is back ({backup.summary})")


def _refusal(ctrl: Controller, change: Judged, backup: BackupPowerState,
             threshold_percent: float) -> str:
    nbwc = ctrl.cache.no_battery_write_cache
    why = (" (no-battery write cache is on)" if nbwc is True and change.row.exposure is
           Exposure.WITH_NBWC else " (the CLI does not say whether no-battery write cache is "
           "on)" if nbwc is None and change.row.exposure is Exposure.WITH_NBWC else "")
    return (
        f"refused: {ctrl.name}: {change.describe()} would put writes in cache that no "
        f"healthy backup power protects{why}; backup power is {backup.summary} (needs OK "
        f"and a charge of at least {percent(threshold_percent)}% where the charge is known)"
    )


def write_cache_active(ctrl: Controller) -> bool | None:
    """Whether the controller caches writes now: its cache present and ``ok``, a write share
    above 0, and backup power ``ok`` or no-battery write cache on; None where a line that
    decides it was not printed."""
    cache = ctrl.cache
    if cache.present is False:
        return False
    if cache.status is None:
        return None
    if cache.status != "ok" or cache.write_percent == 0:
        return False
    if not (backup_power_healthy(ctrl.backup_power) or cache.no_battery_write_cache is True):
        return None if cache.no_battery_write_cache is None else False
    return None if cache.write_percent is None else True


def unprotected_write_cache(ctrl: Controller, threshold_percent: float) -> list[str]:
    """Why write cache can hold data no healthy backup power protects, in the words an
    operator acts on; none when it cannot. A drive's own write cache on (it has no backup
    power at all), or controller write cache active (not unknown) on backup power below the
    threshold."""
    cache, policy = ctrl.cache, ctrl.cache.drive_write_cache_policy
    reasons = []
    if cache.drive_write_cache is True:
        reasons.append("drive write cache on (a drive's own cache has no backup power)")
    on = [usage for usage in ("configured", "unconfigured", "hba")
          if policy is not None and getattr(policy, usage) == "enable"]
    if on:
        reasons.append(f"drive write cache on for {', '.join(on)} drives (no backup power)")
    backup = backup_power_state(ctrl, threshold_percent)
    if write_cache_active(ctrl) is True and not backup.protected:
        forced = " (no-battery write cache on)" if cache.no_battery_write_cache else ""
        reasons.append(f"controller write cache active{forced} on backup power {backup.summary}")
    return reasons
