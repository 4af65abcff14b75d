"""Real iLOs as they answer (issue #41): iLO 4's HAL links, iLO 6's inline controllers, a
cache described only by its size, backup power with no battery mapped, a health worse than
the status reasons, and HPE's and DMTF's enumerations in the contract's words.

The iLO 4 trees are public payloads (tests/redfish_data/README.md names each source); the
crawl tests read them from the fake iLO over real HTTPS, as ``status --ilo`` does."""

from __future__ import annotations

import asyncio

import pytest

from smartarray_agent.collectors.redfish.crawl import read_ilo
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.common.model import LOGICAL_DRIVE_STATES, PHYSICAL_DRIVE_STATES
from smartarray_agent.common.policy import backup_power_state

from .redfish_ilo import (
    CONTROLLERS,
    ILO4_HAL_TREE,
    ILO4_TREE,
    ILO6_TREE,
    SYSTEM,
    Ilo,
    certificate,
    credentials_file,
    ilo4,
    serve,
    tree,
)
from .test_redfish_snapshot import DISKS, LOGICAL, ilo5, read
from .test_redfish_status_values import current, series

STORAGE = "/redfish/v1/Systems/1/Storage/DE00C000/"
STORAGE_CONTROLLERS = STORAGE + "Controllers/"


def settings(tmp_path, address: str) -> RedfishSettings:
    return RedfishSettings(address=address, credentials_file=credentials_file(tmp_path),
                           ca_file=certificate()[0], connect_timeout_s=2, read_timeout_s=2)


# 1. iLO 4's HAL links: links.<name>.href and links.Member[].href


def test_ilo4_in_the_hal_form_alone_gives_its_drives():
    snapshot = read(tree(ILO4_HAL_TREE))
    (ctrl,) = snapshot.controllers
    assert (ctrl.slot, ctrl.model, ctrl.serial, ctrl.firmware, ctrl.status, ctrl.mode) == (
        "0", "Smart Array P830i Controller", "001438040CF94C0", "4.04", "ok", "raid")
    assert ctrl.backup_power.count == 0  # NotPresent
    (ld,) = ctrl.logical_drives
    assert (ld.drive_id, ld.raid, ld.size_bytes, ld.status) == ("1", "RAID 0", 286070 * 2**20,
                                                                "ok")
    (pd,) = ctrl.physical_drives
    assert (pd.drive_id, pd.port, pd.box, pd.bay, pd.interface, pd.size_bytes, pd.status) == (
        "1I:1:1", "1I", "1", "1", "SAS", 572325 * 2**20, "ok")
    assert (pd.model, pd.serial, pd.firmware, pd.temperature_c) == (
        "EG0600FBVFP", "KWK1JS2X", "HPDC", 25.0)
    assert ctrl.notices == []


def test_ilo4_with_both_link_forms_reads_the_redfish_one():
    (ctrl,) = read(tree(ILO4_TREE)).controllers
    assert (ctrl.slot, ctrl.model, ctrl.serial, ctrl.firmware) == (
        "0", "HP Smart Array P244br Controller", "PDZVU0FLM7I03I", "2.49")
    assert [d.drive_id for d in ctrl.physical_drives] == ["1I:1:1"]
    assert [(d.drive_id, d.raid) for d in ctrl.logical_drives] == [("1", "RAID 0")]
    assert ctrl.notices == []


@pytest.mark.parametrize("name", [ILO4_HAL_TREE, ILO4_TREE])
def test_the_crawl_follows_ilo4_links_over_https(tmp_path, name):
    documents = tree(name)
    with serve(Ilo(documents)) as ilo:
        snapshot = asyncio.run(read_ilo(settings(tmp_path, ilo.address)))
    assert snapshot.model_dump() == read(documents).model_dump() | {
        "notices": snapshot.notices}
    (ctrl,) = snapshot.controllers
    assert len(ctrl.physical_drives) == len(ctrl.logical_drives) == 1


# 2. iLO 6: the controller the Storage resource carries inline is never dropped


@pytest.mark.parametrize("status", [404, 500])
def test_ilo6_controllers_collection_unread_keeps_the_inline_controller(tmp_path, status):
    with serve(Ilo(tree(ILO6_TREE), status={STORAGE_CONTROLLERS: status})) as ilo:
        snapshot = asyncio.run(read_ilo(settings(tmp_path, ilo.address)))
    (ctrl,) = snapshot.controllers
    assert (ctrl.slot, ctrl.model, ctrl.serial, ctrl.firmware, ctrl.status) == (
        "1", "HPE MR408i-o Gen11", "PXXGC0ARHGN0AB", "52.26.3-5379", "ok")
    assert (ctrl.cache.present, ctrl.cache.size_bytes) == (True, 2**32)
    assert len(ctrl.physical_drives) == 2 and len(ctrl.logical_drives) == 1
    assert any(n.startswith(f"redfish: {STORAGE_CONTROLLERS} was not read in full: the "
                            "controller is the one the Storage resource carries "
                            "(StorageControllers)")
               for n in ctrl.notices), ctrl.notices
    if status == 500:  # why, from the request that failed
        assert any("HTTP 500" in n for n in snapshot.notices), snapshot.notices


def test_ilo6_a_controller_member_unread_keeps_the_inline_controller():
    documents = tree(ILO6_TREE)
    del documents[STORAGE_CONTROLLERS + "0/"]
    (ctrl,) = read(documents).controllers
    assert (ctrl.slot, ctrl.serial) == ("1", "PXXGC0ARHGN0AB")


def test_ilo6_reads_the_collection_when_it_can():
    documents = tree(ILO6_TREE)
    documents[STORAGE_CONTROLLERS + "0/"]["FirmwareVersion"] = "52.26.3-9999"
    (ctrl,) = read(documents).controllers
    assert ctrl.firmware == "52.26.3-9999"
    assert not any("StorageControllers" in n for n in ctrl.notices)


# 3. a controller that reports a cache size has a cache


@pytest.mark.parametrize(("size", "module", "present"), [
    (1024, None, True), (2048, None, True), (0, None, None), (None, None, None),
    (2048, {"Health": "OK", "State": "Absent"}, False),
])
def test_a_cache_size_says_the_cache_is_there(size, module, present):
    documents = ilo5(CacheMemorySizeMiB=size)
    if module is None:
        del documents[CONTROLLERS + "0/"]["CacheModuleStatus"]
    else:
        documents[CONTROLLERS + "0/"]["CacheModuleStatus"] = module
    assert read(documents).controllers[0].cache.present is present


def test_the_ilo4_p244br_has_its_1_gib_cache():
    (ctrl,) = read(tree(ILO4_TREE)).controllers
    assert (ctrl.cache.present, ctrl.cache.size_bytes) == (True, 2**30)


def test_a_dmtf_cache_size_says_the_cache_is_there():
    documents = tree(ILO6_TREE)
    del documents[STORAGE_CONTROLLERS + "0/"]["CacheSummary"]["Status"]
    assert read(documents).controllers[0].cache.present is True


# 4. backup power Present with no battery mapped: one source, status and charge unknown


def test_backup_power_present_without_a_battery_is_one_source_of_unknown_status():
    (ctrl,) = read(tree(ILO4_TREE)).controllers  # Present, and the iLO lists no battery
    power = ctrl.backup_power
    assert (power.source, power.count, power.status, power.charge_percent) == (
        None, 1, None, None)
    found = series(ctrl)
    assert found[("smartarray_backup_power_units", ())] == 1.0
    assert current(found, "smartarray_backup_power_status") == "absent"  # no status given
    assert not backup_power_state(ctrl, 80).protected


# 5. the worse of the status reasons and Status.Health wins


@pytest.mark.parametrize(("reasons", "health", "word"), [
    (["Ok"], "Warning", "warning"),
    (["Ok"], "Critical", "critical"),
    (["Expanding"], "Warning", "warning"),  # progressing: a state the check calls healthy
    (["Ok"], "OK", "ok"),
    (["Rebuilding"], "Warning", "rebuilding"),  # the reason says more than the health
    (["Failed"], "Critical", "failed"),
])
def test_a_logical_drive_health_worse_than_its_reasons_wins(reasons, health, word):
    documents = ilo5()
    documents[LOGICAL + "1/"].update(LogicalDriveStatusReasons=reasons,
                                     Status={"Health": health, "State": "Enabled"})
    (ld,) = read(documents).controllers[0].logical_drives
    assert ld.status == word


@pytest.mark.parametrize(("reasons", "health", "word"), [
    (["None"], "Warning", "warning"),
    (["Rebuilding"], "Critical", "critical"),
    (["EraseCompleted"], "Warning", "warning"),
    (["PredictiveFail"], "Warning", "predictive_failure"),
])
def test_a_physical_drive_health_worse_than_its_reasons_wins(reasons, health, word):
    documents = ilo5()
    documents[DISKS + "0/"].update(DiskDriveStatusReasons=reasons,
                                   Status={"Health": health, "State": "Enabled"})
    assert read(documents).controllers[0].physical_drives[0].status == word


# 6. HPE's and DMTF's enumerations in the contract's words; "other" for the rest


@pytest.mark.parametrize(("reason", "word"), [
    ("NonAuthenticDrive", "other"), ("Unrecoverable", "failed"),
    ("CommunicationFailure", "failed"), ("QueuedForErase", "erasing"),
    ("EraseInProgress", "erase_in_progress"), ("SomethingNew", "other"),
])
def test_disk_drive_status_reasons_are_contract_words(reason, word):
    """With no health stated: a reason with no state of its own is other (with a health
    stated, the health says: test_redfish_readings.py, issue #51 item 3)."""
    documents = ilo5()
    documents[DISKS + "0/"].update(DiskDriveStatusReasons=[reason], Status={"State": "Enabled"})
    drive = read(documents).controllers[0].physical_drives[0]
    assert (drive.status, drive.status_text) == (word, reason)


@pytest.mark.parametrize(("reason", "word"), [
    ("Shutdown", "failed"), ("UnencryptedToEncryptedInProgress", "transforming"),
    ("Overheating", "other"), ("SomethingNew", "other"),
])
def test_logical_drive_status_reasons_are_contract_words(reason, word):
    documents = ilo5()
    documents[LOGICAL + "1/"].update(LogicalDriveStatusReasons=[reason],
                                     Status={"State": "Enabled"})
    (ld,) = read(documents).controllers[0].logical_drives
    assert ld.status == word


def test_every_documented_reason_is_a_word_the_drive_tables_list_or_other():
    from smartarray_agent.collectors.redfish.smartstorage import DISK_REASONS, LOGICAL_REASONS
    assert set(LOGICAL_REASONS.values()) <= {*LOGICAL_DRIVE_STATES, "other"}
    assert set(DISK_REASONS.values()) <= {*PHYSICAL_DRIVE_STATES, "other", None}


@pytest.mark.parametrize(("raid_type", "said"), [
    ("None", None), ("RAID1Triple", "RAID 1ADM"), ("RAID10Triple", "RAID 10ADM"),
    ("RAID6TP", "RAID 6TP"), ("JBOD", "other"),
])
def test_dmtf_raid_types_are_contract_words(raid_type, said):
    documents = tree(ILO6_TREE)
    volume = next(doc for doc in documents.values() if "RAIDType" in doc)
    volume["RAIDType"] = raid_type
    assert read(documents).controllers[0].logical_drives[0].raid == said


def test_ilo4_battery_in_systems_1_backs_the_controller_with_no_charge():
    """iLO 4 lists its battery in Systems/1 Oem.Hp.Battery[] (HPE's iLO 4 resource
    definitions): Condition is its health, and it has no charge."""
    documents = tree(ILO4_TREE)
    documents[SYSTEM] = ilo4()[SYSTEM]
    snapshot = read(documents)
    power = snapshot.controllers[0].backup_power
    assert (power.source, power.count, power.status, power.status_text, power.charge_percent
            ) == ("batteries", 1, "ok", "Ok", None)
    # with no charge known, the policy judges by the status, as it judges the CLI's "OK"
    assert backup_power_state(snapshot.controllers[0], 80).protected
