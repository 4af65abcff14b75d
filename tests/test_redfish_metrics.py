"""Redfish metrics as the agent exports them: names, units, state series, labels, and the
collector metrics, through the agent's own renderer."""

from __future__ import annotations

from pathlib import Path

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.redfish.resources import ArrayController, Battery, Reading
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.exporter.render import MetricSettings, render

SETTINGS = RedfishSettings.model_construct(address="https://ilo.example",
                                           credentials_file=Path("/nonexistent"))


def exposition(reading, *, success: bool, duration_s: float,
               last_success_at: float | None) -> str:
    result = CollectorResult(name="redfish", success=success, duration_s=duration_s,
                             last_success_at=last_success_at, data=reading,
                             last_success_monotonic=last_success_at)
    collector = RedfishCollector(SETTINGS, Charge(SETTINGS))
    return render([(collector, result)], now=1_700_000_100.0,
                  settings=MetricSettings(stale_after_s=None)).decode()


def lines(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{")]


BATTERY = Battery(index=1, model="875241-B21", product_name="HPE Smart Storage Battery",
                  serial="6WQXK0JWYF441K", firmware="0.70", charge_percent=61, wear_percent=5,
                  capacity_watts=96, remaining_charge_time_s=1740, health="warning")
SLOT_0 = ArrayController(resource="/ac/0/", slot="0", backup_power="present")
OK = {"success": True, "duration_s": 0.84, "last_success_at": 1_700_000_000.0}
TAKEN_AT = 1_700_000_000.0  # 100 s before the exposition: within max_age_s


def test_sample_lines_of_a_charging_battery():
    text = exposition(Reading(taken_at=TAKEN_AT, batteries=[BATTERY], controllers=[SLOT_0]), **OK)
    labels = 'battery="1",controller="0",model="875241-B21"'
    assert f"smartarray_battery_charge_ratio{{{labels}}} 0.61" in text
    assert f"smartarray_battery_wear_ratio{{{labels}}} 0.05" in text
    assert f"smartarray_battery_capacity_watts{{{labels}}} 96.0" in text
    assert f"smartarray_battery_remaining_charge_time_seconds{{{labels}}} 1740.0" in text
    assert lines(text, "smartarray_battery_status") == [
        f'smartarray_battery_status{{{labels},state="{state}"}} {value}'
        for state, value in (("ok", "0.0"), ("warning", "1.0"), ("critical", "0.0"),
                             ("other", "0.0"), ("absent", "0.0"))
    ]
    assert ('smartarray_battery_info{battery="1",controller="0",firmware="0.70",'
            'model="875241-B21",product="HPE Smart Storage Battery",'
            'serial="6WQXK0JWYF441K"} 1.0') in text
    assert 'smartarray_collector_success{collector="redfish"} 1.0' in text
    assert 'smartarray_collector_duration_seconds{collector="redfish"} 0.84' in text
    assert ('smartarray_collector_last_success_timestamp_seconds{collector="redfish"} 1.7e+09'
            in text)


def test_ilo4_battery_has_no_charge_series_and_an_unknown_word_is_other():
    ilo4 = Battery(index=1, model="727261-B21", capacity_watts=12, health="degraded")
    text = exposition(Reading(taken_at=TAKEN_AT, batteries=[ilo4]), **OK)
    assert lines(text, "smartarray_battery_charge_ratio") == []
    assert 'controller="",model="727261-B21",state="other"} 1.0' in text
    assert "degraded" not in text  # no raw status text in labels


def test_no_controller_label_when_the_battery_backs_several():
    slot_3 = ArrayController(resource="/ac/3/", slot="3", backup_power="present")
    text = exposition(Reading(taken_at=TAKEN_AT, batteries=[BATTERY], controllers=[SLOT_0, slot_3]),
                      **OK)
    assert lines(text, "smartarray_battery_charge_ratio") == [
        'smartarray_battery_charge_ratio{battery="1",controller="",model="875241-B21"} 0.61']


def test_a_failure_without_any_reading():
    text = exposition(None, success=False, duration_s=2.0, last_success_at=None)
    assert 'smartarray_collector_success{collector="redfish"} 0.0' in text
    assert "last_success_timestamp" not in text and "smartarray_battery" not in text


def test_a_failure_keeps_the_last_reading_and_its_time():
    text = exposition(Reading(taken_at=TAKEN_AT, batteries=[BATTERY]), success=False,
                      duration_s=30.0, last_success_at=1_700_000_000.0)
    assert 'smartarray_collector_success{collector="redfish"} 0.0' in text
    assert 'smartarray_collector_last_success_timestamp_seconds{collector="redfish"}' in text
    assert len(lines(text, "smartarray_battery_charge_ratio")) == 1


def test_the_charge_is_dropped_with_a_reading_older_than_max_age():
    """The battery's charge expires as the controller's does (the interlock's max_age_s); its
    other values stay while the collector's result is served."""
    old = Reading(taken_at=TAKEN_AT - SETTINGS.max_age_s, batteries=[BATTERY])
    text = exposition(old, **OK)
    assert lines(text, "smartarray_battery_charge_ratio") == []
    assert len(lines(text, "smartarray_battery_wear_ratio")) == 1
