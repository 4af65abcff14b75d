"""A simulator scenario as an iLO 5 would serve it: the Redfish resource tree of the same
host, for the fake iLO (tests/redfish_ilo.py).

The scenario is read with the simulator's own model (simulator/scenario.py). The
tree has the shapes of tests/redfish_data/ilo5-p408i-a-gen10.json and of HPE's iLO 5 resource
definitions (``HpeSmartStorageArrayController.v2_2_0``, ``HpeSmartStorageLogicalDrive.v2_3_0``,
``HpeSmartStorageDiskDrive.v2_1_0``, ``Chassis`` ``Oem.Hpe.SmartStorageBattery[]``); values
map as docs/redfish.md's tables say, read backwards. A scenario fact that has no iLO 5
equivalent gets no property, and :class:`Rendered` ``excluded`` names the metric series that
then cannot agree, with the reason, so a comparison leaves them out on purpose, not silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smartarray_agent.collectors.ssacli.values import logical_size_bytes, physical_size_bytes
from smartarray_agent.simulator.scenario import Controller, Scenario

from .redfish_ilo import CHASSIS, CONTROLLERS, SYSTEM, battery_ilo5

MIB = 2**20
# the CLI's word -> Status.Health (HPE: OK, Warning, Critical); only OK means the same on
# both sides: the CLI's "Failed" is a state, Critical a severity (docs/redfish.md: critical
# is not failed)
_HEALTH = {"OK": "OK"}
_MODES = {"raid": "RAID", "hba": "HBA", "mixed": "Mixed"}
# the CLI's Fault Tolerance -> HpeSmartStorageLogicalDrive Raid (HPE's enum)
_RAID = {"0": "0", "1": "1", "1+0": "10", "5": "5", "50": "50", "6": "6", "60": "60"}
# the CLI's backup power status -> BackupPowerSourceStatus; a failed battery is "Present"
# with the battery's Status.Health Critical (HPE: "Present": charging information unknown),
# which the agent reads as the CLI's "Failed (Replace Batteries)"
_BACKUP = {"OK": "PresentAndCharged", "Recharging": "PresentAndCharging"}


@dataclass
class Rendered:
    """The resource tree (path -> JSON object) and the series left out of a comparison:
    (family, controller label) -> why."""

    resources: dict[str, dict]
    excluded: dict[tuple[str, str], str] = field(default_factory=dict)

    def exclude(self, families: tuple[str, ...], slot: str, why: str) -> None:
        for family in families:
            self.excluded.setdefault((family, slot), why)


def render(scenario: Scenario) -> Rendered:
    """The iLO 5 tree of ``scenario``'s host (its controllers, drives and batteries)."""
    out = Rendered({})
    batteries = [c for c in scenario.controllers if c.backup_power.source == "Batteries"]
    chassis_batteries = [battery_ilo5(**_charge(c), index=i + 1)
                         for i, c in enumerate(batteries)]
    out.resources[CHASSIS] = {
        "@odata.id": CHASSIS, "@odata.type": "#Chassis.v1_10_0.Chassis", "Id": "1",
        "Oem": {"Hpe": {"SmartStorageBattery": chassis_batteries}},
    }
    out.resources[SYSTEM] = {"@odata.id": SYSTEM, "Id": "1",
                             "Oem": {"Hpe": {"PostState": "FinishedPost"}}}
    paths = [f"{CONTROLLERS}{i}/" for i in range(len(scenario.controllers))]
    out.resources[CONTROLLERS] = _collection(CONTROLLERS, paths)
    for path, ctrl in zip(paths, scenario.controllers, strict=True):
        _controller(out, path, ctrl, len(chassis_batteries))
    return out


def _charge(ctrl: Controller) -> dict:
    """The battery entry's charge and health for the CLI's status: charged when ``OK``,
    half-charged while recharging, Critical when failed."""
    status = ctrl.backup_power.status or ""
    if status == "Recharging":
        return {"charge": 50, "remaining_s": 1800}
    return {"charge": 100, "health": "OK" if status == "OK" else "Critical"}


def _controller(out: Rendered, path: str, ctrl: Controller, batteries: int) -> None:
    slot, cache = ctrl.slot, ctrl.cache
    doc: dict = {
        "@odata.id": path,
        "@odata.type": "#HpeSmartStorageArrayController.v2_2_0.HpeSmartStorageArrayController",
        "AdapterType": "SmartArray",
        "FirmwareVersion": {"Current": {"VersionString": ctrl.firmware}},
        "Id": path.rstrip("/").rsplit("/", 1)[1],
        "Location": f"Slot {slot}",
        "LocationFormat": "PCISlot",
        "Model": ctrl.model,
        "SerialNumber": ctrl.serial + " ",  # the iLO pads serial numbers
        "CacheModuleStatus": {"State": "Enabled" if cache.present else "Absent"},
        "Links": {"LogicalDrives": {"@odata.id": f"{path}LogicalDrives/"},
                  "PhysicalDrives": {"@odata.id": f"{path}DiskDrives/"}},
    }
    if ctrl.status in _HEALTH:
        doc["Status"] = {"Health": _HEALTH[ctrl.status], "State": "Enabled"}
    else:
        out.exclude(("smartarray_controller_status",), slot,
                    f"controller status {ctrl.status!r} has no Status.Health equivalent")
    if ctrl.mode is not None:
        doc["CurrentOperatingMode"] = _MODES[ctrl.mode]
    if not cache.present:
        pass  # the CLI prints no cache status without a module, and the iLO no health
    elif cache.status in _HEALTH:
        doc["CacheModuleStatus"]["Health"] = _HEALTH[cache.status]
    else:
        # the CLI's Cache Status says whether the cache works now (temporarily disabled for
        # a low battery); CacheModuleStatus.Health is the module's health and does not say
        # (docs/redfish.md), and whether write cache is active follows from that status
        out.exclude(("smartarray_cache_status", "smartarray_cache_status_info",
                     "smartarray_write_cache_active", "smartarray_unprotected_write_cache"),
                    slot, f"cache status {cache.status!r}: no Health equivalent")
    if cache.size_bytes is not None:
        assert cache.size_bytes % MIB == 0, "a cache size the iLO could not give in MiB"
        doc["CacheMemorySizeMiB"] = cache.size_bytes // MIB
    if cache.read_percent is not None:
        doc["ReadCachePercent"] = cache.read_percent
    doc["WriteCacheWithoutBackupPowerEnabled"] = cache.no_battery_write_cache
    if cache.drive_write_cache is not None:
        doc["DriveWriteCache"] = "Enabled" if cache.drive_write_cache else "Disabled"
    # else Gen10's CLI prints per-usage policies, which the iLO's one switch does not hold
    _backup_power(out, doc, ctrl, batteries)
    out.resources[path] = doc
    _logical_drives(out, path, ctrl)
    _physical_drives(out, path, ctrl)


def _backup_power(out: Rendered, doc: dict, ctrl: Controller, batteries: int) -> None:
    power, slot = ctrl.backup_power, ctrl.slot
    if power.count == 0:
        doc["BackupPowerSourceStatus"] = "NotPresent"
        return
    if power.source is None and power.status is None:
        return  # the CLI prints nothing of backup power, and neither does this iLO
    status = power.status or ""
    doc["BackupPowerSourceStatus"] = _BACKUP.get(status, "Present")
    if power.source != "Batteries" or batteries != 1:
        # the battery maps to this controller only where it is the one battery (merge.py,
        # rule 1); a capacitor pack is no Smart Storage Battery: no source, no count
        out.exclude(("smartarray_backup_power_source", "smartarray_backup_power_units"), slot,
                    f"{power.source} with {batteries} Smart Storage Batteries: Redfish does "
                    "not say which backs this controller")
        if status not in _BACKUP:
            out.exclude(_BACKUP_STATUS, slot, f"backup power {status!r} with no battery "
                                              "mapped: Present says nothing of its health")
    elif status not in _BACKUP and not status.startswith("Failed"):
        out.exclude(_BACKUP_STATUS, slot, f"backup power {status!r}: the battery's Health "
                                          "(OK, Warning, Critical) has no such word")


_BACKUP_STATUS = ("smartarray_backup_power_status", "smartarray_backup_power_status_info")


def _logical_drives(out: Rendered, path: str, ctrl: Controller) -> None:
    where = f"{path}LogicalDrives/"
    paths = [f"{where}{ld.id}/" for ld in ctrl.logical_drives]
    out.resources[where] = _collection(where, paths)
    for ld_path, ld in zip(paths, ctrl.logical_drives, strict=True):
        size = logical_size_bytes(ld.size)
        doc: dict = {
            "@odata.id": ld_path,
            "@odata.type": "#HpeSmartStorageLogicalDrive.v2_3_0.HpeSmartStorageLogicalDrive",
            "Id": ld.id,
            "LogicalDriveNumber": int(ld.id),
            "AccelerationMethod": "ControllerCache" if ld.caching else "None",
        }
        if size is not None:
            doc["CapacityMiB"] = round(size / MIB)
        if ld.raid in _RAID:
            doc["Raid"] = _RAID[ld.raid]
        else:
            out.exclude(("smartarray_logical_drive_info",), ctrl.slot,
                        f"RAID {ld.raid!r} is not in HPE's Raid enum")
        _drive_status(out, doc, ctrl.slot, ld.status, "logical",
                      ("LogicalDriveStatusReasons", "Ok"))
        out.resources[ld_path] = doc


def _physical_drives(out: Rendered, path: str, ctrl: Controller) -> None:
    where = f"{path}DiskDrives/"
    paths = [f"{where}{i}/" for i in range(len(ctrl.physical_drives))]
    out.resources[where] = _collection(where, paths)
    for pd_path, pd in zip(paths, ctrl.physical_drives, strict=True):
        size = physical_size_bytes(pd.size)
        doc: dict = {
            "@odata.id": pd_path,
            "@odata.type": "#HpeSmartStorageDiskDrive.v2_1_0.HpeSmartStorageDiskDrive",
            "Id": pd_path.rstrip("/").rsplit("/", 1)[1],
            "Location": pd.id,
            "LocationFormat": "ControllerPort:Box:Bay",
            "InterfaceType": pd.interface,
            "MediaType": "SSD" if pd.ssd else "HDD",
            "FirmwareVersion": {"Current": {"VersionString": pd.firmware}},
        }
        if size is not None:
            doc["CapacityMiB"] = round(size / MIB)
        if pd.model is not None:
            doc["Model"] = pd.model
        if pd.serial is not None:
            doc["SerialNumber"] = pd.serial
        _drive_status(out, doc, ctrl.slot, pd.status, "physical",
                      ("DiskDriveStatusReasons", "None"))
        out.resources[pd_path] = doc


def _drive_status(out: Rendered, doc: dict, slot: str, status: str | None, drive: str,
                  no_reason: tuple[str, str]) -> None:
    """A drive's Status and its "no problem" status reason (``no_reason``: the property and
    HPE's word for none) for a status both sides say alike; any other status is left out of
    the comparison."""
    if status in _HEALTH:
        doc[no_reason[0]] = [no_reason[1]]
        doc["Status"] = {"Health": _HEALTH[status], "State": "Enabled"}
    else:
        out.exclude((f"smartarray_{drive}_drive_status", f"smartarray_{drive}_drive_status_info"),
                    slot, f"{drive} drive status {status!r}: not rendered")


def _collection(path: str, members: list[str]) -> dict:
    return {"@odata.id": path, "Members": [{"@odata.id": m} for m in members],
            "Members@odata.count": len(members)}
