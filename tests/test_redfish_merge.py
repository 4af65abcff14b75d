"""Battery -> controller mapping, freshness, and the interlock judging by a merged charge."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.redfish.merge import merge_charge
from smartarray_agent.collectors.redfish.resources import ArrayController, Battery, Reading
from smartarray_agent.common.model import BackupPower, Cache, Controller, Snapshot
from smartarray_agent.common.policy import judge
from smartarray_agent.write.kinds import Change, Kind

NOW = 10_000.0


def cli_controller(slot: str | None = "0", serial: str | None = "PEYHC0DRHC73AL",
                   cache: bool = True) -> Controller:
    return Controller(
        slot=slot, model="HPE Smart Array P408i-a SR Gen10", serial=serial,
        cache=Cache(present=cache, status="ok" if cache else None, write_percent=90,
                    read_percent=10, no_battery_write_cache=False),
        backup_power=BackupPower(source="batteries", count=1, status="ok", status_text="OK"),
    )


def ilo_controller(slot: str | None = "0", serial: str | None = "PEYHC0DRHC73AL",
                   backup: str = "present") -> ArrayController:
    return ArrayController(resource=f"/ac/{slot}/", location=f"Slot {slot}", slot=slot,
                           serial=serial, backup_power=backup)


def reading(*controllers: ArrayController, charges=(93.0,), age_s: float = 10) -> Reading:
    batteries = [Battery(index=i + 1, charge_percent=c, health="ok")
                 for i, c in enumerate(charges)]
    return Reading(taken_at=NOW - age_s, batteries=batteries, controllers=list(controllers))


def charges(snapshot: Snapshot, got: Reading, max_age_s: float = 900) -> list[float | None]:
    merged = merge_charge(snapshot, got, NOW, max_age_s)
    return [c.backup_power.charge_percent for c in merged.controllers]


def notices(snapshot: Snapshot, got: Reading, max_age_s: float = 900) -> list[str]:
    return merge_charge(snapshot, got, NOW, max_age_s).notices


def test_matched_by_serial_though_the_ilo_pads_and_lower_cases_it():
    snapshot = Snapshot(controllers=[cli_controller()])
    got = reading(ilo_controller(slot="7", serial="peyhc0drhc73al "))
    assert charges(snapshot, got) == [93.0]


def test_matched_by_slot_when_the_cli_has_no_serial():
    snapshot = Snapshot(controllers=[cli_controller(serial=None)])
    assert charges(snapshot, reading(ilo_controller())) == [93.0]


def test_different_serials_never_match_even_in_the_same_slot():
    snapshot = Snapshot(controllers=[cli_controller()])
    got = reading(ilo_controller(serial="OTHER"))
    assert charges(snapshot, got) == [None]
    assert notices(snapshot, got) == [
        "redfish: charge not mapped: no controller of the CLI matches (by serial or slot) a "
        "controller the iLO lists with backup power"]


def test_one_shared_battery_backs_every_controller_with_backup_power():
    snapshot = Snapshot(controllers=[
        cli_controller("0", "A1"), cli_controller("3", "B2"), cli_controller("5", "C3")])
    got = reading(ilo_controller("0", "A1"), ilo_controller("3", "B2"),
                  ilo_controller("5", "C3", backup="not_present"))
    assert charges(snapshot, got) == [93.0, 93.0, None]


def test_two_batteries_map_nothing_and_say_why():
    snapshot = Snapshot(controllers=[cli_controller()])
    got = reading(ilo_controller(), charges=(93.0, 40.0))
    assert charges(snapshot, got) == [None]
    assert notices(snapshot, got) == [
        "redfish: charge not mapped: the iLO reports 2 batteries and Redfish does not say "
        "which controller each one backs"]


@pytest.mark.parametrize(
    ("controllers", "expected"),
    [([cli_controller()], [93.0]),
     ([cli_controller("0", "A1"), cli_controller("1", "B2", cache=False)], [93.0, None]),
     ([cli_controller("0", "A1"), cli_controller("1", "B2")], [None, None])],
    ids=["one-controller", "one-with-a-cache", "two-with-a-cache"],
)
def test_without_controller_data_only_a_single_cached_controller_gets_the_charge(
        controllers, expected):
    assert charges(Snapshot(controllers=controllers), reading()) == expected


def test_a_stale_reading_changes_nothing():
    snapshot = Snapshot(controllers=[cli_controller()])
    got = reading(ilo_controller(), age_s=1000)
    assert charges(snapshot, got, max_age_s=900) == [None]
    assert notices(snapshot, got, max_age_s=900) == [
        "redfish: charge not used: the reading is 1000 s old (max_age_s 900)"]


def test_ilo4_battery_without_a_charge_changes_nothing():
    snapshot = Snapshot(controllers=[cli_controller()])
    got = reading(ilo_controller(), charges=(None,))
    assert charges(snapshot, got) == [None]
    assert notices(snapshot, got) == ["redfish: battery 1 reports no charge"]


def test_the_snapshot_given_is_not_changed():
    snapshot = Snapshot(controllers=[cli_controller()])
    merge_charge(snapshot, reading(ilo_controller()), NOW, 900)
    assert snapshot.controllers[0].backup_power.charge_percent is None
    assert snapshot.notices == []


NBWC_ON = Change(Kind.NO_BATTERY_WRITE_CACHE, enable=True)


def test_interlock_refuses_when_the_merged_charge_is_low_though_the_cli_says_ok():
    snapshot = Snapshot(controllers=[cli_controller()])
    merged = merge_charge(snapshot, reading(ilo_controller(), charges=(62.0,)), NOW, 900)
    verdict = judge(merged.controllers[0], NBWC_ON, 80.0)
    assert not verdict.allowed
    assert "batteries ok, charge 62%" in verdict.message
    assert judge(snapshot.controllers[0], NBWC_ON, 80.0).allowed  # the CLI alone says yes


def test_interlock_judges_by_the_status_when_the_reading_is_stale():
    snapshot = Snapshot(controllers=[cli_controller()])
    stale = reading(ilo_controller(), charges=(62.0,), age_s=3600)
    verdict = judge(merge_charge(snapshot, stale, NOW, 900).controllers[0], NBWC_ON, 80.0)
    assert verdict.allowed and verdict.needs_confirmation
    assert verdict.backup.summary == "batteries ok"


def test_interlock_allows_with_a_fresh_full_charge():
    snapshot = Snapshot(controllers=[cli_controller()])
    merged = merge_charge(snapshot, reading(ilo_controller(), charges=(97.0,)), NOW, 900)
    verdict = judge(merged.controllers[0], NBWC_ON, 80.0)
    assert verdict.allowed and verdict.backup.summary == "batteries ok, charge 97%"
