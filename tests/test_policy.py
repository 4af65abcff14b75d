"""The interlock against DESIGN.md's table, for every combination of backup power status,
charge, cache status and change kind (in CI; by default every pair of them, tests/matrix.py:
each status meets each charge, cache status and row of the table)."""

from __future__ import annotations

import pytest

from smartarray_agent.common.model import BackupPower, Cache, Controller
from smartarray_agent.common.policy import backup_power_state, judge, write_cache_active
from smartarray_agent.write.kinds import Change, Kind

from .matrix import cases

THRESHOLD = 80.0
STATUSES = ["ok", "recharging", "failed", "absent", "unknown"]
CHARGES = {"none": None, "below": 79.0, "at": 80.0, "above": 97.0}
CACHE_STATES = {
    "ok": ("ok", None),
    "temporarily_disabled for battery": (
        "temporarily_disabled", "Cache disabled; battery/capacitor charge is low."),
    "permanently_disabled": ("permanently_disabled", "Permanent disable condition."),
    "not_configured": ("not_configured", None),
    "unknown": (None, None),
}

# change -> (nbwc before, write share before, change, allowed at/above, confirmation at/above,
#            allowed below): DESIGN.md's table, row by row
TABLE = {
    "nbwc off": (True, 75, Change(Kind.NO_BATTERY_WRITE_CACHE, enable=False), True, False, True),
    "dwc off": (False, 75, Change(Kind.DRIVE_WRITE_CACHE, enable=False), True, False, True),
    "gen10 dwc off": (False, 75, Change(Kind.DRIVE_WRITE_CACHE, enable=False,
                                        usage="configured"), True, False, True),
    "caching off": (True, 75, Change(Kind.LOGICAL_DRIVE_CACHING, enable=False,
                                     logical_drive="1"), True, False, True),
    "ratio, nbwc off": (False, 75, Change(Kind.CACHE_RATIO, read_percent=10, write_percent=90),
                        True, False, True),
    "ratio lowering writes, nbwc on": (True, 75, Change(Kind.CACHE_RATIO, read_percent=50,
                                                        write_percent=50), True, False, True),
    "ratio raising writes, nbwc on": (True, 75, Change(Kind.CACHE_RATIO, read_percent=10,
                                                       write_percent=90), True, False, False),
    "ratio, unknown before, nbwc on": (True, None, Change(Kind.CACHE_RATIO, read_percent=50,
                                                          write_percent=50), True, False, False),
    "nbwc on": (False, 75, Change(Kind.NO_BATTERY_WRITE_CACHE, enable=True), True, True, False),
    "dwc on": (False, 75, Change(Kind.DRIVE_WRITE_CACHE, enable=True), True, True, False),
    "gen10 dwc on (hba)": (False, 75, Change(Kind.DRIVE_WRITE_CACHE, enable=True, usage="hba"),
                           True, True, False),
    "caching on, nbwc off": (False, 75, Change(Kind.LOGICAL_DRIVE_CACHING, enable=True,
                                               logical_drive="1"), True, False, True),
    "caching on, nbwc on": (True, 75, Change(Kind.LOGICAL_DRIVE_CACHING, enable=True,
                                             logical_drive="1"), True, False, False),
}


def controller(status: str, charge: float | None, cache_state: str, nbwc: bool,
               write_percent: int | None) -> Controller:
    cache_status, details = CACHE_STATES[cache_state]
    if status == "absent":
        power = BackupPower(count=0)
    elif status == "unknown":
        power = BackupPower(source="batteries", count=1, status=None)
    else:
        power = BackupPower(source="batteries", count=1, status=status)
    power.charge_percent = charge
    return Controller(
        slot="0", model="Smart Array P440ar", serial="PDNLH0BRH7X32P",
        cache=Cache(present=True, status=cache_status, status_details=details,
                    read_percent=None if write_percent is None else 100 - write_percent,
                    write_percent=write_percent, no_battery_write_cache=nbwc),
        backup_power=power,
    )


def at_or_above(status: str, charge: str, cache_state: str) -> bool:
    return (status == "ok" and charge in ("none", "at", "above")
            and cache_state != "temporarily_disabled for battery")


@pytest.mark.parametrize(
    ("status", "charge", "cache_state", "row"),
    cases(STATUSES, CHARGES, CACHE_STATES, TABLE),  # all pairs of them, every one in CI
)
def test_every_combination_follows_the_table(status, charge, cache_state, row):
    nbwc, write_before, change, allowed_above, confirm_above, allowed_below = TABLE[row]
    ctrl = controller(status, CHARGES[charge], cache_state, nbwc, write_before)
    verdict = judge(ctrl, change, THRESHOLD)
    if at_or_above(status, charge, cache_state):
        assert verdict.backup.protected
        assert (verdict.allowed, verdict.needs_confirmation) == (allowed_above, confirm_above)
    else:
        assert not verdict.backup.protected
        assert verdict.allowed == allowed_below
        assert not verdict.needs_confirmation or verdict.allowed
    if not verdict.allowed:
        # a refusal names the controller, the battery state and the threshold
        assert "Smart Array P440ar in slot 0" in verdict.message
        assert verdict.backup.summary in verdict.message
        assert "80%" in verdict.message


def test_the_charge_counts_only_with_an_ok_status():
    ctrl = controller("recharging", 99.0, "ok", False, 75)
    assert not backup_power_state(ctrl, THRESHOLD).protected
    ctrl = controller("ok", 79.9, "ok", False, 75)
    assert not backup_power_state(ctrl, THRESHOLD).protected
    assert backup_power_state(ctrl, 79.0).protected


def test_a_below_threshold_allowance_says_write_cache_stays_inactive():
    ctrl = controller("failed", None, "ok", False, 75)
    verdict = judge(ctrl, Change(Kind.CACHE_RATIO, read_percent=10, write_percent=90), THRESHOLD)
    assert verdict.allowed and "stays inactive" in verdict.message


@pytest.mark.parametrize(("status", "nbwc", "write_percent", "active"), [
    ("ok", False, None, None),  # iLO 6 and `show status`: the write share is not given
    ("ok", True, None, None),
    ("failed", True, None, None),
    ("failed", False, None, False),  # unprotected and not forced on: off whatever the share
    ("ok", False, 0, False),
    ("ok", False, 75, True),
])
def test_an_unknown_write_share_leaves_write_cache_activity_unknown(status, nbwc,
                                                                      write_percent, active):
    assert write_cache_active(controller(status, None, "ok", nbwc, write_percent)) is active
