"""The status model from the iLO alone (collectors/redfish/snapshot.py): pure, documents in,
snapshot out. Facts the iLO does not give are null; the policy judges the result as it
judges the CLI's."""

from __future__ import annotations

import json

import pytest

from smartarray_agent.collectors.redfish.snapshot import snapshot_from
from smartarray_agent.common.model import Snapshot
from smartarray_agent.common.policy import backup_power_state, unprotected_write_cache

from .agent_cli import agent
from .model_reader import STATUS_SCHEMA
from .redfish_ilo import CHASSIS, ILO5_CONTROLLER, ILO5_TREE, ILO6_TREE, battery_ilo5, tree

DISKS = ILO5_CONTROLLER + "DiskDrives/"
LOGICAL = ILO5_CONTROLLER + "LogicalDrives/"


def ilo5(**controller: object) -> dict[str, dict]:
    documents = tree(ILO5_TREE)
    documents[ILO5_CONTROLLER].update(controller)
    return documents


def read(documents: dict[str, dict]) -> Snapshot:
    snapshot = snapshot_from(documents, "ilo.example:443")
    STATUS_SCHEMA.validate(json.loads(snapshot.model_dump_json()))
    return snapshot


def test_ilo5_gives_the_controller_its_cache_switches_and_backup_power():
    (ctrl,) = read(ilo5()).controllers
    assert (ctrl.slot, ctrl.model, ctrl.serial, ctrl.firmware, ctrl.status, ctrl.mode) == (
        "0", "HPE Smart Array P408i-a SR Gen10", "PSIMXP408IA001", "6.52", "ok", "mixed")
    cache = ctrl.cache
    assert (cache.status, cache.size_bytes, cache.read_percent, cache.write_percent) == (
        "ok", 2 * 2**30, 20, 80)
    assert (cache.no_battery_write_cache, cache.drive_write_cache) == (False, False)
    power = ctrl.backup_power
    assert (power.source, power.count, power.status, power.status_text, power.charge_percent
            ) == ("batteries", 1, "ok", "OK", 99.0)


def test_ilo5_gives_logical_and_physical_drives_with_ssd_wear():
    (ctrl,) = read(ilo5()).controllers
    (ld,) = ctrl.logical_drives
    # the CLI's words for the same drive (the gen10 scenario): RAID 1+0, Solid State SATA
    assert (ld.drive_id, ld.raid, ld.size_bytes, ld.status, ld.caching) == (
        "1", "RAID 1+0", 1835008 * 2**20, "ok", True)
    assert [d.drive_id for d in ctrl.physical_drives] == ["2I:1:1", "2I:1:2", "2I:1:3", "2I:1:4"]
    first = ctrl.physical_drives[0]
    assert (first.port, first.box, first.bay, first.interface, first.status) == (
        "2I", "1", "1", "Solid State SATA", "ok")
    assert (first.model, first.firmware, first.temperature_c, first.power_on_hours) == (
        "MK000960GWEZH", "HPD4", 31.0, 21840)
    # SSDEnduranceUtilizationPercentage is the share worn out; the model keeps what remains
    assert [d.usage_remaining_percent for d in ctrl.physical_drives] == [97, 97, 96, None]


def test_what_the_ilo_does_not_give_is_null():
    (ctrl,) = read(ilo5()).controllers
    cache = ctrl.cache
    # no CacheModuleStatus.State in this answer, but a cache size: a cache is there
    assert cache.present is True
    assert (cache.status_details, cache.memory_available_bytes, cache.drive_write_cache_policy,
            cache.wait_for_cache_room) == (None, None, None, None)
    assert (ctrl.embedded, ctrl.pci_address, ctrl.temperatures.controller_c) == (None,) * 3
    drive = ctrl.physical_drives[3]
    # MaximumTemperatureCelsius is the drive's recommended maximum, not the CLI's highest
    # temperature seen: it is not taken for it
    assert (drive.max_temperature_c, drive.power_on_hours, drive.array,
            drive.estimated_life_remaining_days) == (None,) * 4
    assert ctrl.logical_drives[0].array is None


def test_the_ilo_says_the_same_as_the_cli_about_the_same_host(tmp_path):
    """The fixture is the simulator's gen10 host: every fact both give agrees."""
    answer = agent("status", "--json", "--simulate", "gen10",
                   env={"SMARTARRAY_SIM_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert answer.returncode == 0, answer.stderr
    cli = Snapshot.model_validate_json(answer.stdout).controllers[0]
    (ilo,) = read(ilo5()).controllers
    for field in ("slot", "model", "serial", "firmware", "status", "mode"):
        assert getattr(ilo, field) == getattr(cli, field), field
    for field in ("status", "size_bytes", "read_percent", "write_percent",
                  "no_battery_write_cache"):
        assert getattr(ilo.cache, field) == getattr(cli.cache, field), field
    for field in ("source", "count", "status", "status_text"):
        assert getattr(ilo.backup_power, field) == getattr(cli.backup_power, field), field
    assert [(d.drive_id, d.raid, d.status, d.caching) for d in ilo.logical_drives] == [
        (d.drive_id, d.raid, d.status, d.caching) for d in cli.logical_drives]
    assert [(d.drive_id, d.interface, d.serial, d.firmware, d.status)
            for d in ilo.physical_drives] == [
        (d.drive_id, d.interface, d.serial, d.firmware, d.status) for d in cli.physical_drives]


@pytest.mark.parametrize(("raid", "said"), [
    ("0", "RAID 0"), ("1", "RAID 1"), ("10", "RAID 1+0"), ("5", "RAID 5"), ("50", "RAID 50"),
    ("6", "RAID 6"), ("60", "RAID 60"),
    ("1ADM", "RAID 1ADM"),  # no CLI text to match was seen: RAID and the level as sent
])
def test_the_raid_level_is_the_clis_word(raid, said):
    documents = ilo5()
    documents[LOGICAL + "1/"]["Raid"] = raid
    (ld,) = read(documents).controllers[0].logical_drives
    assert ld.raid == said


@pytest.mark.parametrize(("interface", "media", "said"), [
    ("SATA", "SSD", "Solid State SATA"), ("SAS", "SSD", "Solid State SAS"),
    ("SAS", "HDD", "SAS"), ("SATA", None, "SATA"), (None, "SSD", None),
])
def test_an_ssds_interface_is_the_clis_word(interface, media, said):
    documents = ilo5()
    documents[DISKS + "0/"].update(InterfaceType=interface, MediaType=media)
    assert read(documents).controllers[0].physical_drives[0].interface == said


@pytest.mark.parametrize(("reasons", "word"), [
    (["Ok"], "ok"),
    (["Recovering"], "interim_recovery_mode"),  # HPE: "using Interim Recovery Mode"
    (["Rebuilding"], "rebuilding"),
    (["ReadyForRebuild"], "ready_for_rebuild"),
    (["WrongDrive"], "wrong_drive_replaced"),
    (["Ok", "Expanding"], "expanding"),
    (["Failed"], "failed"),
    # no word of the drive tables: the health the iLO states (OK here) says (issue #51 item 3)
    (["Overheating"], "ok"),
])
def test_logical_drive_status_reasons_become_the_clis_words(reasons, word):
    documents = ilo5()
    documents[LOGICAL + "1/"]["LogicalDriveStatusReasons"] = reasons
    (ld,) = read(documents).controllers[0].logical_drives
    assert (ld.status, ld.status_text) == (word, ", ".join(reasons))


@pytest.mark.parametrize(("reasons", "health", "word"), [
    (["None"], "OK", "ok"),
    (["None"], "Warning", "warning"),
    (["PredictiveFail"], "Warning", "predictive_failure"),
    (["Failed"], "Critical", "failed"),
    (["EraseInProgress"], "OK", "erase_in_progress"),
    ([], None, None),
])
def test_disk_drive_status_reasons_first_then_health(reasons, health, word):
    documents = ilo5()
    documents[DISKS + "0/"].update(DiskDriveStatusReasons=reasons,
                                   Status={"Health": health, "State": "Enabled"})
    drive = read(documents).controllers[0].physical_drives[0]
    assert drive.status == word


@pytest.mark.parametrize(("property_", "value", "field"), [
    ("ReadCachePercent", 150, "read_percent"),
    ("ReadCachePercent", "20", "write_percent"),
    ("CacheMemorySizeMiB", "2048", "size_bytes"),
    ("WriteCacheWithoutBackupPowerEnabled", "true", "no_battery_write_cache"),
    ("DriveWriteCache", "Sometimes", "drive_write_cache"),
    ("CacheModuleStatus", None, "status"),
])
def test_a_value_of_the_wrong_type_or_range_is_unknown(property_, value, field):
    (ctrl,) = read(ilo5(**{property_: value})).controllers
    assert getattr(ctrl.cache, field) is None


def test_cache_module_state_absent_is_no_cache_module():
    (ctrl,) = read(ilo5(CacheModuleStatus={"Health": "OK", "State": "Absent"})).controllers
    assert ctrl.cache.present is False


def test_backup_power_not_present_is_none_and_unprotected():
    (ctrl,) = read(ilo5(BackupPowerSourceStatus="NotPresent")).controllers
    assert (ctrl.backup_power.count, ctrl.backup_power.charge_percent) == (0, None)
    assert not backup_power_state(ctrl, 80).protected


def test_backup_power_charging_is_recharging():
    (ctrl,) = read(ilo5(BackupPowerSourceStatus="PresentAndCharging")).controllers
    assert (ctrl.backup_power.status, ctrl.backup_power.charge_percent) == ("recharging", 99.0)
    assert not backup_power_state(ctrl, 80).protected


def test_a_critical_battery_is_failed_backup_power_with_its_charge():
    documents = ilo5()
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [
        battery_ilo5(charge=12, health="Critical")]
    power = read(documents).controllers[0].backup_power
    assert (power.status, power.status_text, power.charge_percent) == ("failed", "Critical",
                                                                       12.0)


@pytest.mark.parametrize("charge", [None, 255, "50"])
def test_a_charge_that_is_no_percentage_is_unknown_and_said(charge):
    documents = ilo5()
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(charge=charge)]
    snapshot = read(documents)
    assert snapshot.controllers[0].backup_power.charge_percent is None
    assert snapshot.notices[-1] == (f"redfish: battery 1 reports a charge that is not a number "
                                    f"0-100: {json.dumps(charge)}: the charge is unknown")


def test_two_batteries_leave_the_charge_unknown_and_say_why():
    documents = ilo5()
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(index=1),
                                                               battery_ilo5(index=2)]
    snapshot = read(documents)
    power = snapshot.controllers[0].backup_power
    assert (power.source, power.status, power.charge_percent) == (None, None, None)
    assert any("2 batteries" in notice for notice in snapshot.notices)
    assert not backup_power_state(snapshot.controllers[0], 80).protected


def test_unprotected_write_cache_is_judged_by_the_policy():
    healthy = read(ilo5()).controllers[0]
    assert not unprotected_write_cache(healthy, 80)
    documents = ilo5(WriteCacheWithoutBackupPowerEnabled=True)
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(charge=45)]
    assert unprotected_write_cache(read(documents).controllers[0], 80)
    assert unprotected_write_cache(read(ilo5(DriveWriteCache="Enabled")).controllers[0], 80)


def test_a_drive_collection_not_read_is_said_and_empty():
    documents = ilo5()
    del documents[DISKS]
    (ctrl,) = read(documents).controllers
    assert ctrl.physical_drives == [] and len(ctrl.logical_drives) == 1
    assert ctrl.notices == [f"redfish: {DISKS} was not read: no PhysicalDrives known"]


def test_ilo6_reads_the_dmtf_model_and_says_what_it_lacks():
    snapshot = read(tree(ILO6_TREE))
    (ctrl,) = snapshot.controllers
    assert (ctrl.slot, ctrl.model, ctrl.serial, ctrl.firmware, ctrl.status) == (
        "1", "HPE MR408i-o Gen11", "PXXGC0ARHGN0AB", "52.26.3-5379", "ok")
    assert (ctrl.cache.present, ctrl.cache.status, ctrl.cache.size_bytes) == (True, "ok", 2**32)
    assert (ctrl.cache.read_percent, ctrl.cache.write_percent, ctrl.cache.no_battery_write_cache,
            ctrl.cache.drive_write_cache) == (None,) * 4
    assert ctrl.backup_power.model_dump() == {
        "source": None, "count": None, "status": None, "status_text": None,
        "charge_percent": None, "failed_locations": []}
    assert any("no cache ratio, no no-battery write cache switch" in n for n in ctrl.notices)
    (volume,) = ctrl.logical_drives
    assert (volume.drive_id, volume.raid, volume.status, volume.size_bytes) == (
        "239", "RAID 1", "ok", 959656755200)
    assert [(d.interface, d.firmware, d.usage_remaining_percent) for d in ctrl.physical_drives
            ] == [("SAS", "HPD2", 97), ("SAS", "HPD3", None)]


def test_an_ilo_without_storage_resources_has_no_controllers():
    snapshot = read({CHASSIS: tree(ILO5_TREE)[CHASSIS]})
    assert snapshot.controllers == []
    assert "no SmartStorage array controller" in snapshot.notices[-1]


@pytest.mark.parametrize(("raid_type", "said"), [
    ("RAID0", "RAID 0"), ("RAID1", "RAID 1"), ("RAID10", "RAID 1+0"), ("RAID5", "RAID 5"),
    ("RAID50", "RAID 50"), ("RAID6", "RAID 6"), ("RAID60", "RAID 60"), ("RAID1E", "RAID 1E"),
    ("None", None), (None, None),  # no RAID level: the contract has no word for it
])
def test_a_dmtf_volume_s_raid_type_is_the_clis_word(raid_type, said):
    documents = tree(ILO6_TREE)
    volume = next(doc for doc in documents.values() if "RAIDType" in doc)
    volume["RAIDType"] = raid_type
    (ctrl,) = read(documents).controllers
    assert ctrl.logical_drives[0].raid == said
