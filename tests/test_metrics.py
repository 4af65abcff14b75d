"""Metric conventions, the write-cache rules as metrics, failure and staleness."""

from __future__ import annotations

import gzip
import importlib.metadata
import platform
import re
from collections import defaultdict
from pathlib import Path

import pytest

from smartarray_agent.collectors.base import CollectionError, CollectorResult, collect_once
from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.redfish.collector import RedfishCollector
from smartarray_agent.collectors.redfish.resources import ArrayController, Battery, Reading
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.ssacli import metrics as ssacli_metrics
from smartarray_agent.common.model import (
    BackupPower,
    Cache,
    Controller,
    DriveWriteCachePolicy,
    LogicalDrive,
    Snapshot,
)
from smartarray_agent.exporter.render import MetricSettings, render, valid_until
from smartarray_agent.exporter.view import MetricsView

from .agent_process import parse_samples, value
from .entries import ssacli, ssacli_entries
from .metric_names import metric_help

GOLDEN = Path(__file__).with_name("golden")
DOCS = Path(__file__).parents[1] / "docs" / "metrics.md"
T0 = 1_700_000_000.0
SETTINGS = MetricSettings(stale_after_s=180)


def exposition(*results: CollectorResult, now: float = T0 + 1,
               settings: MetricSettings = SETTINGS, threshold_percent: float = 80.0) -> str:
    entries = ssacli_entries(*results, threshold_percent=threshold_percent)
    return render(entries, now=now, settings=settings).decode()


def ok(snapshot: Snapshot, at: float = T0) -> CollectorResult:
    """A success at ``at``, as Unix time and on the monotonic clock alike."""
    return CollectorResult("ssacli", True, 2.0, at, snapshot, last_success_monotonic=at)


def controller(**fields) -> Controller:
    defaults = dict(model="Smart Array P440ar", slot="0", serial="PSIM1", firmware="7.00",
                    status="ok", mode="raid",
                    cache=Cache(present=True, status="ok", read_percent=10, write_percent=90,
                                no_battery_write_cache=False, drive_write_cache=False),
                    backup_power=BackupPower(source="batteries", count=1, status="ok"),
                    logical_drives=[LogicalDrive(drive_id="1", status="ok", caching=True)])
    return Controller(**{**defaults, **fields})


@pytest.mark.parametrize("golden", sorted(GOLDEN.glob("*.prom")), ids=lambda p: p.stem)
def test_state_gauges_emit_every_state_and_exactly_one_is_set(golden):
    groups: dict[tuple, dict[str, float]] = defaultdict(dict)
    for (name, labels), number in parse_samples(golden.read_text()).items():
        labels = dict(labels)
        if "state" in labels:
            state = labels.pop("state")
            groups[(name, frozenset(labels.items()))][state] = number
    assert groups
    for (name, _), states in groups.items():
        assert {"other", "absent"} <= set(states), name
        assert sorted(states.values()) == [0.0] * (len(states) - 1) + [1.0], name


def test_no_raw_status_text_and_ratios_are_fractions():
    text = (GOLDEN / "unsafe-nbwc.prom").read_text()
    assert "Replace" not in text and "Failed" not in text  # "Failed (Replace Batteries)"
    states = set(re.findall(r'state="([^"]*)"', text))
    assert all(re.fullmatch(r"[a-z_]+", state) for state in states)
    for (name, _), number in parse_samples(text).items():
        if name.endswith("_ratio"):
            assert 0 <= number <= 1


def test_a_status_outside_the_known_words_is_other_and_a_missing_one_absent():
    snapshot = Snapshot(controllers=[controller(
        status="on_fire", cache=Cache(status=None),
        backup_power=BackupPower(status="degraded"))])
    samples = parse_samples(exposition(ok(snapshot)))
    assert value(samples, "smartarray_controller_status", controller="0", state="other") == 1
    assert value(samples, "smartarray_cache_status", controller="0", state="absent") == 1
    assert value(samples, "smartarray_backup_power_status", controller="0",
                 state="other") == 1
    text = exposition(ok(snapshot))
    # an unknown word shows only in the _info series the unknown-state alerts quote (issue 14)
    assert "on_fire" not in text
    assert [line for line in text.splitlines() if "degraded" in line] == [
        'smartarray_backup_power_status_info{controller="0",word="degraded"} 1.0']


def test_unknown_values_are_left_out_not_guessed():
    snapshot = Snapshot(controllers=[controller(cache=Cache(status="ok"))])
    samples = parse_samples(exposition(ok(snapshot)))
    for name in ("smartarray_cache_size_bytes", "smartarray_cache_ratio",
                 "smartarray_cache_present", "smartarray_drive_write_cache_enabled",
                 "smartarray_backup_power_charge_ratio"):
        assert not any(n == name for n, _ in samples), name


@pytest.mark.parametrize(("fields", "active", "unprotected"), [
    ({}, 1, 0),
    ({"backup_power": BackupPower(source="batteries", count=1, status="failed"),
      "cache": Cache(present=True, status="ok", write_percent=90, read_percent=10,
                     no_battery_write_cache=True)}, 1, 1),
    ({"backup_power": BackupPower(source="batteries", count=1, status="ok",
                                  charge_percent=60.0)}, 1, 1),  # below the 80 % threshold
    ({"backup_power": BackupPower(source="batteries", count=1, status="ok",
                                  charge_percent=95.0)}, 1, 0),
    ({"cache": Cache(present=True, status="temporarily_disabled", read_percent=10,
                     write_percent=90)}, 0, 0),
    ({"cache": Cache(present=True, status="ok", read_percent=100, write_percent=0)}, 0, 0),
    ({"cache": Cache(present=True, status="ok", read_percent=10, write_percent=90,
                     drive_write_cache=True)}, 1, 1),  # drive caches are never protected
    ({"cache": Cache(present=True, status="ok", read_percent=10, write_percent=90,
                     drive_write_cache_policy=DriveWriteCachePolicy(
                         configured="default", unconfigured="enable"))}, 1, 1),
])
def test_write_cache_active_and_unprotected(fields, active, unprotected):
    samples = parse_samples(exposition(ok(Snapshot(controllers=[controller(**fields)]))))
    assert value(samples, "smartarray_write_cache_active", controller="0") == active
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == unprotected


def test_the_threshold_is_the_interlocks():
    snapshot = Snapshot(controllers=[controller(
        backup_power=BackupPower(source="batteries", count=1, status="ok", charge_percent=85.0))])
    samples = parse_samples(exposition(ok(snapshot), threshold_percent=90))
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert value(samples, "smartarray_backup_power_charge_ratio", controller="0") == 0.85


def test_controller_labels_are_unique():
    controllers = [controller(slot="0"), controller(slot="0", serial="B"),
                   controller(slot=None, serial="C"), controller(slot=None, serial=None)]
    assert ssacli_metrics.controller_ids(controllers) == ["0", "0#2", "sn:C", "index:3"]


def test_a_failure_keeps_the_last_good_values_with_their_time():
    snapshot = Snapshot(controllers=[controller()])

    class Failing:
        name = "ssacli"

        def collect(self):
            raise CollectionError("ssacli ctrl all show config detail did not finish in 60 s")

        def close(self):
            pass

    failed = collect_once(Failing(), ok(snapshot))
    assert (failed.success, failed.last_success_at, failed.data) == (False, T0, snapshot)
    assert failed.error == "ssacli ctrl all show config detail did not finish in 60 s"
    samples = parse_samples(exposition(failed, now=T0 + 100))
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 0
    assert value(samples, "smartarray_collector_last_success_timestamp_seconds",
                 collector="ssacli") == T0
    assert value(samples, "smartarray_controller_status", controller="0", state="ok") == 1


def test_values_older_than_stale_after_are_dropped_the_collector_metrics_stay():
    result = CollectorResult("ssacli", False, 60.0, T0, Snapshot(controllers=[controller()]),
                             "timed out", T0)
    fresh = exposition(result, now=T0 + 180)
    stale = exposition(result, now=T0 + 180.5)
    assert "smartarray_controller_info{" in fresh
    assert "smartarray_controller_info{" not in stale
    assert 'smartarray_collector_success{collector="ssacli"} 0.0' in stale
    assert "smartarray_collector_last_success_timestamp_seconds{" in stale
    forever = MetricSettings(stale_after_s=None)
    assert "smartarray_controller_info{" in exposition(result, now=T0 + 10**6, settings=forever)


def test_a_collector_that_never_succeeded_has_no_timestamp():
    text = exposition(CollectorResult("ssacli", False, 0.1, None, None, "no CLI"))
    assert 'smartarray_collector_success{collector="ssacli"} 0.0' in text
    assert "smartarray_collector_last_success_timestamp_seconds{" not in text


def test_the_view_renders_once_and_again_only_when_data_goes_stale():
    clock = [T0]
    view = MetricsView(SETTINGS, clock=lambda: clock[0])
    entries = ssacli_entries(ok(Snapshot(controllers=[controller()])))
    view.publish(entries)
    first = view.body()
    assert view.body() is first  # served from the cache
    clock[0] = T0 + 180
    assert view.body() is first
    clock[0] = T0 + 181
    stale = view.body()
    assert b"smartarray_controller_info{" not in stale
    assert view.body() is stale  # nothing else will go stale: cached again
    assert gzip.decompress(view.body(compressed=True)) == stale
    assert view.body(compressed=True) is view.body(compressed=True)
    assert valid_until(entries, SETTINGS, clock[0]) is None


def test_docs_list_every_metric_and_only_those():
    documented = set(re.findall(r"^### `(smartarray_[a-z_]+)`", DOCS.read_text(), re.M))
    assert documented == set(metric_help())


def test_an_ilo_charge_is_served_until_max_age_and_the_page_is_made_again_then():
    settings = RedfishSettings.model_construct(address="https://ilo.example",
                                               credentials_file=Path("/nonexistent"),
                                               max_age_s=900.0)
    charge = Charge(settings, clock=lambda: T0)
    charge.update(Reading(taken_at=T0, batteries=[Battery(index=1, charge_percent=97)],
                          controllers=[ArrayController(resource="/ac/0/", slot="0",
                                                       backup_power="present")]))
    clock = [T0 + 10]
    view = MetricsView(MetricSettings(stale_after_s=None), clock=lambda: clock[0])
    view.publish([(ssacli(charge=charge), ok(Snapshot(controllers=[controller()])))])
    assert b'smartarray_backup_power_charge_ratio{controller="0"} 0.97' in view.body()
    clock[0] = T0 + 900
    assert b"smartarray_backup_power_charge_ratio{" in view.body()
    clock[0] = T0 + 950  # a reading older than max_age_s is never served from the cache
    assert b"smartarray_backup_power_charge_ratio{" not in view.body()


def test_both_charge_series_of_one_ilo_reading_expire_at_max_age_together():
    """The iLO's charge is served per battery (the redfish collector) and per controller (the
    interlock's, through Charge): one reading, one freshness rule, [redfish] max_age_s, though
    the redfish collector's result itself is not stale."""
    settings = RedfishSettings.model_construct(address="https://ilo.example",
                                               credentials_file=Path("/nonexistent"),
                                               max_age_s=900.0)
    charge = Charge(settings, clock=lambda: T0)
    reading = Reading(taken_at=T0, batteries=[Battery(index=1, charge_percent=97)],
                      controllers=[ArrayController(resource="/ac/0/", slot="0",
                                                   backup_power="present")])
    charge.update(reading)
    clock = [T0 + 10]
    view = MetricsView(MetricSettings(stale_after_s=None), clock=lambda: clock[0])
    view.publish([(ssacli(charge=charge), ok(Snapshot(controllers=[controller()]))),
                  (RedfishCollector(settings, charge),
                   CollectorResult("redfish", True, 1.0, T0, reading,
                                   last_success_monotonic=T0))])
    body = view.body()
    assert b'smartarray_backup_power_charge_ratio{controller="0"} 0.97' in body
    assert b'smartarray_battery_charge_ratio{battery="1",controller="0",model=""} 0.97' in body
    clock[0] = T0 + 950
    view.advance()
    body = view.body()
    assert b"smartarray_backup_power_charge_ratio{" not in body
    assert b"smartarray_battery_charge_ratio{" not in body
    assert b'smartarray_battery_status{battery="1"' in body  # the rest of the reading stays


def test_the_page_after_an_expiry_is_made_with_the_round_not_by_the_scrape():
    settings = RedfishSettings.model_construct(address="https://ilo.example",
                                               credentials_file=Path("/nonexistent"),
                                               max_age_s=900.0)
    charge = Charge(settings, clock=lambda: T0)
    charge.update(Reading(taken_at=T0, batteries=[Battery(index=1, charge_percent=97)],
                          controllers=[ArrayController(resource="/ac/0/", slot="0",
                                                       backup_power="present")]))
    collector = ssacli(charge=charge)
    made: list[float] = []
    families = collector.families
    collector.families = lambda data, now: made.append(now) or families(data, now)  # type: ignore[method-assign]
    clock = [T0 + 10]
    view = MetricsView(MetricSettings(stale_after_s=None), clock=lambda: clock[0])
    view.publish([(collector, ok(Snapshot(controllers=[controller()])))])
    assert view.changes_at() == T0 + 900
    assert made == [T0 + 10, T0 + 900.001]  # the page now, and the page after the expiry
    clock[0] = T0 + 950
    assert b"smartarray_backup_power_charge_ratio{" not in view.body()
    assert len(made) == 2  # served as it was made
    view.advance()  # what the loop does when the page changes
    assert view.changes_at() is None and len(made) == 3


def test_build_info_names_the_version_and_python():
    samples = parse_samples(exposition())
    [(name, labels)] = [key for key in samples if key[0] == "smartarray_build_info"]
    labels = dict(labels)
    assert labels["version"] == importlib.metadata.version("smartarray-agent")
    assert labels["python"] == platform.python_version()
