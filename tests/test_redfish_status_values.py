"""Every value of iLO 5's ``BackupPowerSourceStatus`` and ``CacheModuleStatus`` (HPE's
``HpeSmartStorageArrayController.v2_2_0``), plus none and a word HPE does not define: the
snapshot's status model and the metric the probe renders from it (collectors/ssacli/
metrics.py). A value the code does not know is unknown (``absent`` or ``other``), never
``ok``; whether write cache is unprotected is the policy's judgement (common/policy.py), the
same code as for the CLI's snapshot."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.ssacli.metrics import families
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.common.policy import unprotected_write_cache

from .redfish_ilo import CHASSIS, ILO5_CONTROLLER, battery_ilo5
from .test_redfish_snapshot import ilo5, read

THRESHOLD = 80.0
MISSING = object()  # the property left out of the answer


def controller(battery: bool = True, **properties: object) -> Controller:
    """The gen10 tree's controller with ``properties`` laid over it (MISSING: removed);
    without ``battery`` the chassis lists none."""
    documents = ilo5()
    doc = documents[ILO5_CONTROLLER]
    for key, value in properties.items():
        if value is MISSING:
            doc.pop(key, None)
        else:
            doc[key] = value
    if not battery:
        documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = []
    (ctrl,) = read(documents).controllers
    return ctrl


def series(ctrl: Controller) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The controller's samples as the probe renders them, without the controller label."""
    return {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "controller"))):
            s.value for f in families(Snapshot(controllers=[ctrl]), THRESHOLD)
            for s in f.samples}


def current(found: dict, family: str, label: str = "state") -> str:
    """The one state of ``family`` that is 1."""
    (state,) = [dict(labels)[label] for (name, labels), v in found.items()
                if name == family and v == 1.0]
    return state


# BackupPowerSourceStatus, with the one Smart Storage Battery (Health OK, charge 99) listed
# or none: the model's source, count, status and charge, the metric's state, and, with the
# no-battery write cache on, whether write cache is unprotected
@pytest.mark.parametrize(("value", "battery", "model", "state", "unprotected"), [
    # HPE: "Present": backup power present, charging information unknown; the battery
    # says the rest (merge.py, rule 1)
    ("Present", True, ("batteries", 1, "ok", 99.0), "ok", False),
    # with no battery mapped: one source of a kind, status and charge unknown
    ("Present", False, (None, 1, None, None), "absent", True),
    ("PresentAndCharged", True, ("batteries", 1, "ok", 99.0), "ok", False),
    ("PresentAndCharged", False, (None, 1, "ok", None), "ok", False),
    ("PresentAndCharging", True, ("batteries", 1, "recharging", 99.0), "recharging", True),
    ("PresentAndCharging", False, (None, 1, "recharging", None), "recharging", True),
    ("NotPresent", True, (None, 0, None, None), "absent", True),
    ("NotPresent", False, (None, 0, None, None), "absent", True),
    # none, a word HPE does not define, the wrong type: unknown, and no battery is mapped
    (MISSING, True, (None, None, None, None), "absent", True),
    ("PresentAndDischarging", True, (None, None, None, None), "absent", True),
    (1, True, (None, None, None, None), "absent", True),
    (None, True, (None, None, None, None), "absent", True),
])
def test_every_backup_power_source_status(value, battery, model, state, unprotected):
    ctrl = controller(battery, BackupPowerSourceStatus=value,
                      WriteCacheWithoutBackupPowerEnabled=True)
    power = ctrl.backup_power
    assert (power.source, power.count, power.status, power.charge_percent) == model
    found = series(ctrl)
    assert current(found, "smartarray_backup_power_status") == state
    assert found.get(("smartarray_backup_power_units", ())) == power.count
    charge = found.get(("smartarray_backup_power_charge_ratio", ()))
    assert charge == (None if model[3] is None else 0.99)
    # judged by the policy, as the CLI's snapshot is; the metric is that judgement
    assert bool(unprotected_write_cache(ctrl, THRESHOLD)) is unprotected
    assert found[("smartarray_unprotected_write_cache", ())] == float(unprotected)


def test_a_charge_below_the_threshold_is_unprotected_whatever_the_status_says():
    documents = ilo5(WriteCacheWithoutBackupPowerEnabled=True,
                     BackupPowerSourceStatus="PresentAndCharged")
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(charge=79)]
    (ctrl,) = read(documents).controllers
    assert (ctrl.backup_power.status, ctrl.backup_power.charge_percent) == ("ok", 79.0)
    assert series(ctrl)[("smartarray_unprotected_write_cache", ())] == 1.0


# The battery's Status.Health behind "Present" or "PresentAndCharged": Critical is a battery
# that needs replacing, the state the CLI calls "Failed (Replace Batteries)", so it raises
# SmartArrayBackupPowerFailed, not the unknown-word alert; Warning says less: unknown
@pytest.mark.parametrize(("health", "status", "state"), [
    ("OK", "ok", "ok"), ("Critical", "failed", "failed"), ("Warning", "warning", "other"),
    ("Degraded", "degraded", "other"),
])
@pytest.mark.parametrize("source_status", ["Present", "PresentAndCharged"])
def test_the_battery_s_health_is_the_backup_power_status(health, status, state, source_status):
    documents = ilo5(WriteCacheWithoutBackupPowerEnabled=True,
                     BackupPowerSourceStatus=source_status)
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(health=health)]
    (ctrl,) = read(documents).controllers
    assert (ctrl.backup_power.status, ctrl.backup_power.status_text) == (status, health)
    found = series(ctrl)
    assert current(found, "smartarray_backup_power_status") == state
    assert found[("smartarray_unprotected_write_cache", ())] == float(status != "ok")


# CacheModuleStatus (HPE: a Status object, Health and State): the model's present and
# status, and the metrics'
@pytest.mark.parametrize(("value", "present", "status", "state", "word"), [
    ({"Health": "OK", "State": "Enabled"}, True, "ok", "ok", None),
    ({"Health": "Warning", "State": "Enabled"}, True, "warning", "other", "warning"),
    ({"Health": "Critical", "State": "Enabled"}, True, "critical", "other", "critical"),
    # iLO 5 before 1.40: no State; the controller's CacheMemorySizeMiB (2048) says a cache
    # is there
    ({"Health": "OK"}, True, "ok", "ok", None),
    # State: Absent is no module; any other state is a module there
    ({"Health": "OK", "State": "Absent"}, False, "ok", "ok", None),
    ({"Health": "Critical", "State": "Disabled"}, True, "critical", "other", "critical"),
    ({"Health": "Warning", "State": "StandbyOffline"}, True, "warning", "other", "warning"),
    # a module OK in a state other than Enabled is not an ok cache: the state says (issue
    # #51 item 4)
    ({"Health": "OK", "State": "Starting"}, True, "starting", "other", "starting"),
    ({"Health": "OK", "State": "Disabled"}, True, "disabled", "other", "disabled"),
    # none, a word HPE does not define, the wrong type: unknown
    ({"State": "Enabled"}, True, None, "absent", None),
    ({"Health": "Degraded", "State": "Enabled"}, True, "degraded", "other", "degraded"),
    ({"Health": 1, "State": 7}, True, None, "absent", None),
    (MISSING, True, None, "absent", None),
    ("OK", True, None, "absent", None),  # a string, not the Status object
])
def test_every_cache_module_status(value, present, status, state, word):
    ctrl = controller(CacheModuleStatus=value)
    assert (ctrl.cache.present, ctrl.cache.status) == (present, status)
    found = series(ctrl)
    assert current(found, "smartarray_cache_status") == state
    assert found.get(("smartarray_cache_present", ())) == (
        None if present is None else float(present))
    words = [dict(labels)["word"] for name, labels in found
             if name == "smartarray_cache_status_info"]
    assert words == ([] if word is None else [word])
    # write cache is active only on a cache the iLO calls OK (present or not said)
    active = found.get(("smartarray_write_cache_active", ()))
    assert active == (None if status is None else float(status == "ok" and present is not False))


# a property left out or of the wrong type is unknown (null), never a guess; the metric then
# has no series
@pytest.mark.parametrize(("property_", "value", "field", "family"), [
    ("ReadCachePercent", MISSING, "read_percent", "smartarray_cache_ratio"),
    ("ReadCachePercent", "20", "read_percent", "smartarray_cache_ratio"),
    ("ReadCachePercent", 20.5, "read_percent", "smartarray_cache_ratio"),
    ("ReadCachePercent", True, "read_percent", "smartarray_cache_ratio"),
    ("ReadCachePercent", -1, "read_percent", "smartarray_cache_ratio"),
    ("CacheMemorySizeMiB", MISSING, "size_bytes", "smartarray_cache_size_bytes"),
    ("CacheMemorySizeMiB", -2048, "size_bytes", "smartarray_cache_size_bytes"),
    ("CacheMemorySizeMiB", True, "size_bytes", "smartarray_cache_size_bytes"),
    ("CacheMemorySizeMiB", 2048.0, "size_bytes", "smartarray_cache_size_bytes"),
    ("WriteCacheWithoutBackupPowerEnabled", MISSING, "no_battery_write_cache",
     "smartarray_no_battery_write_cache_enabled"),
    ("WriteCacheWithoutBackupPowerEnabled", 1, "no_battery_write_cache",
     "smartarray_no_battery_write_cache_enabled"),
    ("DriveWriteCache", MISSING, "drive_write_cache", "smartarray_drive_write_cache_enabled"),
    ("DriveWriteCache", False, "drive_write_cache", "smartarray_drive_write_cache_enabled"),
])
def test_a_missing_or_mistyped_cache_property_is_unknown(property_, value, field, family):
    ctrl = controller(**{property_: value})
    assert getattr(ctrl.cache, field) is None
    assert not [name for name, _ in series(ctrl) if name == family]
