"""Issue #51, items 1-7: what real iLO 5, 6 and 7 answers said and the snapshot read wrong,
each on a payload written from HPE's published resource definitions and the DMTF schemas
(their property names and forms; docs/redfish.md says which field comes from which):

1. ``AccelerationMethod: IOBypass``, and any run of capitals, in the word normaliser;
2. a DMTF ``Drives`` member whose ``Status.State`` is ``Absent`` (an empty bay) is no drive;
3. a stated ``Status.Health`` wins over a status reason the tables have no state for;
4. a DMTF cache whose ``Status.State`` is ``Disabled`` is not an ok cache;
5. port, box and bay from a DMTF drive's ``ServiceLabel`` (``Slot=17:Port=2:Box=1:Bay=4``);
6. iLO 7's ``Oem.Hpe.CurrentTemperatureCelsius`` and ``Oem.Hpe.PowerOnHours`` of a drive;
7. a ``Chassis/1`` battery no controller claims is shown, never as a controller's backup
   power.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from smartarray_agent.collectors.redfish.resources import word
from smartarray_agent.common.policy import backup_power_state

from .agent_cli import agent
from .redfish_ilo import CHASSIS, ILO6_TREE, Ilo, battery_ilo5, serve, tree
from .test_redfish_snapshot import DISKS, LOGICAL, ilo5, read
from .test_redfish_snapshot_cli import config

STORAGE = "/redfish/v1/Systems/1/Storage/DE00C000/"
DRIVES = STORAGE + "Drives/"


def ilo6(**drive: object) -> dict[str, dict]:
    """The iLO 6 tree, its first drive with ``drive`` laid over it."""
    documents = tree(ILO6_TREE)
    documents[DRIVES + "0/"].update(drive)
    return documents


def empty_bay(documents: dict[str, dict], number: int) -> str:
    """An empty bay as iLO 6 lists it among a Storage's ``Drives``: ``Status.State``
    ``Absent``, no model, serial or capacity."""
    path = f"{DRIVES}{number}/"
    documents[path] = {"@odata.id": path, "@odata.type": "#Drive.v1_17_0.Drive",
                       "Id": str(number), "Name": "Empty Bay",
                       "Status": {"State": "Absent"}}
    documents[STORAGE]["Drives"].append({"@odata.id": path})
    return path


# -- item 1 ------------------------------------------------------------------------------
@pytest.mark.parametrize(("said", "normal"), [
    ("IOBypass", "io_bypass"), ("SSDSmartPath", "ssd_smart_path"),
    ("ControllerCache", "controller_cache"), ("PresentAndCharging", "present_and_charging"),
    ("NotPresent", "not_present"), ("OK", "ok"), ("RAID", "raid"), ("HBA", "hba"),
    ("ControllerPort:Box:Bay", "controller_port_box_bay"), ("Mixed", "mixed"),
])
def test_a_run_of_capitals_is_one_word(said, normal):
    assert word(said) == normal


@pytest.mark.parametrize(("method", "caching"), [
    ("IOBypass", False), ("None", False), ("ControllerCache", True), ("SmartCache", None)])
def test_io_bypass_is_no_controller_caching(method, caching):
    documents = ilo5()
    documents[LOGICAL + "1/"]["AccelerationMethod"] = method
    assert read(documents).controllers[0].logical_drives[0].caching is caching


# -- item 2 ------------------------------------------------------------------------------
def test_an_empty_bay_is_no_drive():
    documents = tree(ILO6_TREE)
    empty_bay(documents, 2)
    empty_bay(documents, 3)
    (ctrl,) = read(documents).controllers
    assert [d.serial for d in ctrl.physical_drives] == ["S6ESNC0T901234", "WFK2XYZ1"]
    assert all(d.status == "ok" and d.size_bytes for d in ctrl.physical_drives)


# -- item 3 ------------------------------------------------------------------------------
@pytest.mark.parametrize(("reasons", "health", "status", "text"), [
    (["NonAuthenticDrive"], "Warning", "warning", "NonAuthenticDrive; Status.Health Warning"),
    (["SomethingNew"], "Critical", "critical", "SomethingNew; Status.Health Critical"),
    (["NonAuthenticDrive"], "OK", "ok", "NonAuthenticDrive"),
    (["NonAuthenticDrive"], None, "other", "NonAuthenticDrive"),  # no health: unknown
    (["PredictiveFail"], "Warning", "predictive_failure", "PredictiveFail"),  # named: it says
    (["Rebuilding"], "Critical", "critical", "Rebuilding; Status.Health Critical"),
])
def test_the_stated_health_wins_over_a_reason_without_a_state(reasons, health, status, text):
    documents = ilo5()
    documents[DISKS + "0/"].update(DiskDriveStatusReasons=reasons,
                                   Status={"Health": health, "State": "Enabled"})
    drive = read(documents).controllers[0].physical_drives[0]
    assert (drive.status, drive.status_text) == (status, text)


def test_a_logical_drive_reason_without_a_state_leaves_its_health():
    documents = ilo5()
    documents[LOGICAL + "1/"].update(LogicalDriveStatusReasons=["MultipathAccessDegraded"],
                                     Status={"Health": "Warning", "State": "Enabled"})
    ld = read(documents).controllers[0].logical_drives[0]
    assert (ld.status, ld.status_text) == (
        "warning", "MultipathAccessDegraded; Status.Health Warning")


# -- item 4 ------------------------------------------------------------------------------
@pytest.mark.parametrize(("state", "status"), [
    ("Disabled", "disabled"), ("UnavailableOffline", "unavailable_offline"),
    ("Enabled", "ok")])
def test_a_disabled_cache_is_not_an_ok_cache(state, status):
    documents = tree(ILO6_TREE)
    for doc in (documents[STORAGE + "Controllers/0/"],
                documents[STORAGE]["StorageControllers"][0]):
        doc["CacheSummary"]["Status"] = {"Health": "OK", "State": state}
    (ctrl,) = read(documents).controllers
    assert (ctrl.cache.present, ctrl.cache.status) == (True, status)


# -- item 5 ------------------------------------------------------------------------------
def test_port_box_and_bay_come_from_the_drives_location_label():
    label = "Slot=17:Port=2:Box=1:Bay=4"
    documents = ilo6(PhysicalLocation={"PartLocation": {"ServiceLabel": label,
                                                        "LocationType": "Bay"}})
    first, second = read(documents).controllers[0].physical_drives
    assert (first.drive_id, first.port, first.box, first.bay) == (label, "2", "1", "4")
    assert (second.port, second.box, second.bay) == ("1I", "1", "2")


def test_a_label_without_port_box_and_bay_gives_none():
    documents = ilo6(PhysicalLocation={"PartLocation": {"ServiceLabel": "Box 1 Bay 3"}})
    first = read(documents).controllers[0].physical_drives[0]
    assert (first.drive_id, first.port, first.box, first.bay) == ("Box 1 Bay 3", None, None,
                                                                  None)


# -- item 6 ------------------------------------------------------------------------------
def test_ilo7_nvme_temperature_and_power_on_hours_come_from_oem_hpe():
    """iLO 7 1.13's Drive.v1_16_0: ``Oem.Hpe.CurrentTemperatureCelsius`` (integer) and
    ``Oem.Hpe.PowerOnHours`` (integer or null), for a direct-attached NVMe drive."""
    documents = ilo6(**{
        "@odata.type": "#Drive.v1_16_0.Drive", "Protocol": "NVMe", "MediaType": "SSD",
        "Oem": {"Hpe": {"CurrentTemperatureCelsius": 38, "PowerOnHours": 12873,
                        "DriveStatus": {"Health": "OK", "State": "Enabled"},
                        "NVMeId": "1c5c_MZXL51T6HBJQ_S64ENA0W123456", "WearStatus": "OK"}}})
    documents[DRIVES + "1/"]["Oem"] = {"Hpe": {"CurrentTemperatureCelsius": None,
                                               "PowerOnHours": None}}
    first, second = read(documents).controllers[0].physical_drives
    assert (first.interface, first.temperature_c, first.power_on_hours) == ("NVMe", 38, 12873)
    assert (second.temperature_c, second.power_on_hours) == (None, None)


# -- item 7 ------------------------------------------------------------------------------
def _battery_on_chassis(documents: dict[str, dict], *batteries: dict) -> dict[str, dict]:
    documents[CHASSIS]["Oem"] = {"Hpe": {"SmartStorageBattery": list(batteries)}}
    return documents


def test_a_battery_no_controller_claims_is_shown_and_backs_none():
    """iLO 6 with an MR controller: its energy pack is system-level, and the DMTF model ties
    no battery to a controller."""
    documents = _battery_on_chassis(tree(ILO6_TREE), battery_ilo5(
        charge=96, BatteryWearLevelPercent=3, FailurePredicted=False, ErrorCode="0"))
    snapshot = read(documents)
    (battery,) = snapshot.unassigned_batteries
    assert (battery.index, battery.model, battery.serial, battery.status, battery.charge_percent
            ) == (1, "875241-B21", "6WQXK0JWYF441K", "ok", 96.0)
    (ctrl,) = snapshot.controllers
    assert ctrl.backup_power.status is None and ctrl.backup_power.charge_percent is None
    assert not backup_power_state(ctrl, 80).protected


def test_batteries_redfish_cannot_tie_are_shown_and_a_tied_one_is_not_repeated():
    two = read(_battery_on_chassis(ilo5(), battery_ilo5(index=1, charge=96),
                                   battery_ilo5(index=2, charge=40, health="Critical")))
    assert [(b.index, b.status, b.charge_percent) for b in two.unassigned_batteries] == [
        (1, "ok", 96.0), (2, "failed", 40.0)]
    assert two.controllers[0].backup_power.charge_percent is None
    tied = read(ilo5())
    assert tied.unassigned_batteries == [] and tied.controllers[0].backup_power.charge_percent


def test_status_ilo_shows_the_battery_no_controller_claims(tmp_path):
    documents = _battery_on_chassis(tree(ILO6_TREE), battery_ilo5(charge=96))
    env = {**os.environ, "PATH": str(tmp_path), "SMARTARRAY_SIM_STATE_DIR": str(tmp_path)}
    with serve(Ilo(copy.deepcopy(documents))) as ilo:
        args = ("status", "--ilo", ilo.address, "--config", config(tmp_path, None))
        table = agent(*args, env=env)
        data = json.loads(agent(*args, "--json", env=env).stdout)
    assert table.returncode == 0, table.stderr
    assert "battery 1 (875241-B21) from the iLO: ok, charge 96%, backs no controller" \
        in table.stdout
    assert data["unassigned_batteries"][0]["charge_percent"] == 96.0
    assert data["controllers"][0]["backup_power"]["charge_percent"] is None
