"""A simulated host as its iLO's Redfish service shows it: the scenario's controllers, drives
and batteries as documents by path, in iLO 5's form (HPE's SmartStorage model:
``HpeSmartStorageArrayController.v2_2_0``, ``...LogicalDrive.v2_3_0``, ``...DiskDrive.v2_1_0``)
or iLO 6's and 7's (the DMTF ``Storage``, ``StorageController``, ``Drive``, ``Volume``), with
``Chassis/1`` ``Oem.Hpe.SmartStorageBattery[]`` in both: one battery per controller whose
backup power is batteries. The values are docs/redfish.md's tables read backwards; a scenario
fact with no Redfish property gets none. Pure: a scenario in, documents out.
"""

from __future__ import annotations

import re

from smartarray_agent.simulator.scenario import Controller, Scenario

ROOT = "/redfish/v1/"
CHASSIS = ROOT + "Chassis/1/"
SYSTEM = ROOT + "Systems/1/"
ARRAY_CONTROLLERS = SYSTEM + "SmartStorage/ArrayControllers/"
STORAGE = SYSTEM + "Storage/"
SESSIONS = ROOT + "SessionService/Sessions/"
FORMS = {"smartstorage": "iLO 5", "dmtf": "iLO 6"}
MIB = 2**20
_SIZE = re.compile(r"^\s*([\d.]+)\s*([KMGT])B\s*$", re.I)
_MODES = {"raid": "RAID", "hba": "HBA", "mixed": "Mixed"}
# the CLI's backup power status -> BackupPowerSourceStatus; any other is "Present"
_BACKUP = {"OK": "PresentAndCharged", "Recharging": "PresentAndCharging"}
_RAID_TYPES = {"1+0": "RAID10", "1ADM": "RAID1Triple", "10ADM": "RAID10Triple"}


def documents(scenario: Scenario, form: str) -> dict[str, dict]:
    """Every document the iLO serves for ``scenario`` in ``form`` (one of :data:`FORMS`)."""
    batteries = [c for c in scenario.controllers if c.backup_power.source == "Batteries"
                 and c.backup_power.count != 0]
    docs = {
        ROOT: {"@odata.id": ROOT, "RedfishVersion": "1.6.0",
               "Links": {"Sessions": {"@odata.id": SESSIONS}},
               "Oem": {"Hpe": {"Manager": [{"ManagerType": FORMS[form]}]}}},
        CHASSIS: {"@odata.id": CHASSIS, "Id": "1", "Oem": {"Hpe": {"SmartStorageBattery": [
            _battery(c, i + 1) for i, c in enumerate(batteries)]}}},
        SYSTEM: {"@odata.id": SYSTEM, "Id": "1", "Storage": {"@odata.id": STORAGE}},
    }
    top, add = (ARRAY_CONTROLLERS, _smartstorage) if form == "smartstorage" else (STORAGE, _dmtf)
    docs[top] = _collection(top, [add(docs, i, c) for i, c in enumerate(scenario.controllers)])
    return docs


def _battery(ctrl: Controller, index: int) -> dict:
    """The controller's Smart Storage Battery; its charge is the scenario's, else 100 while
    the CLI says OK, else 0."""
    power = ctrl.backup_power
    charge = power.charge_percent if power.charge_percent is not None else \
        100 if power.status == "OK" else 0
    health = "OK" if power.status in _BACKUP else _health(power.status)
    return {"ChargeLevelPercent": charge, "FirmwareVersion": "0.70", "Index": index,
            "MaximumCapWatts": 96, "Model": "875241-B21",
            "ProductName": "HPE Smart Storage Battery ", "SerialNumber": f"6WQXK0JWYF44{index}K",
            "SparePartNumber": "878643-001", "Status": {"Health": health, "State": "Enabled"},
            **({"RemainingChargeTimeSeconds": 0} if charge == 100 else {})}


def _smartstorage(docs: dict[str, dict], index: int, ctrl: Controller) -> str:
    path, cache, power = f"{ARRAY_CONTROLLERS}{index}/", ctrl.cache, ctrl.backup_power
    docs[path] = {
        "@odata.id": path,
        "@odata.type": "#HpeSmartStorageArrayController.v2_2_0.HpeSmartStorageArrayController",
        "Id": str(index), "Location": f"Slot {ctrl.slot}", "LocationFormat": "PCISlot",
        "Model": ctrl.model, "SerialNumber": ctrl.serial + " ",  # the iLO pads serials
        "FirmwareVersion": {"Current": {"VersionString": ctrl.firmware}},
        "Status": _status(ctrl.status),
        "CacheModuleStatus": _cache_status(ctrl),
        "WriteCacheWithoutBackupPowerEnabled": cache.no_battery_write_cache,
        "Links": {"LogicalDrives": {"@odata.id": f"{path}LogicalDrives/"},
                  "PhysicalDrives": {"@odata.id": f"{path}DiskDrives/"}},
        **_given(CurrentOperatingMode=_MODES.get(ctrl.mode or ""),
                 ReadCachePercent=cache.read_percent, CacheMemorySizeMiB=_mib(cache.size_bytes),
                 DriveWriteCache=None if cache.drive_write_cache is None
                 else "Enabled" if cache.drive_write_cache else "Disabled",
                 BackupPowerSourceStatus="NotPresent" if power.count == 0 else None
                 if power.source is None and power.status is None
                 else _BACKUP.get(power.status or "", "Present")),
    }
    lds = {f"{path}LogicalDrives/{ld.id}/": {
        "@odata.type": "#HpeSmartStorageLogicalDrive.v2_3_0.HpeSmartStorageLogicalDrive",
        "Id": ld.id, "LogicalDriveNumber": int(ld.id), "CapacityMiB": _mib(_bytes(ld.size, 1024)),
        "Raid": "10" if ld.raid == "1+0" else ld.raid, "Status": _status(ld.status),
        "LogicalDriveStatusReasons": ["Ok"] if ld.status == "OK" else [],
        "AccelerationMethod": "ControllerCache" if ld.caching else "None",
    } for ld in ctrl.logical_drives}
    pds = {f"{path}DiskDrives/{i}/": {
        "@odata.type": "#HpeSmartStorageDiskDrive.v2_1_0.HpeSmartStorageDiskDrive",
        "Id": str(i), "Location": pd.id, "LocationFormat": "ControllerPort:Box:Bay",
        "InterfaceType": pd.interface, "MediaType": "SSD" if pd.ssd else "HDD",
        "CapacityMiB": _mib(_bytes(pd.size, 1000)), "Status": _status(pd.status),
        "DiskDriveStatusReasons": ["None"] if pd.status == "OK" else [],
        "FirmwareVersion": {"Current": {"VersionString": pd.firmware}},
        **_given(Model=pd.model, SerialNumber=pd.serial),
    } for i, pd in enumerate(ctrl.physical_drives)}
    _add(docs, f"{path}LogicalDrives/", lds)
    _add(docs, f"{path}DiskDrives/", pds)
    return path


def _dmtf(docs: dict[str, dict], index: int, ctrl: Controller) -> str:
    path = f"{STORAGE}DE{index:02X}A000/"
    controller = {
        "@odata.type": "#StorageController.v1_7_0.StorageController", "Id": "0",
        "Model": ctrl.model, "Name": ctrl.model, "SerialNumber": ctrl.serial,
        "FirmwareVersion": ctrl.firmware, "Status": _status(ctrl.status),
        "Location": {"PartLocation": {"LocationType": "Slot", "ServiceLabel": f"Slot={ctrl.slot}"}},
        "CacheSummary": {"Status": _cache_status(ctrl),
                         **_given(TotalCacheSizeMiB=_mib(ctrl.cache.size_bytes))},
    }
    volumes = {f"{path}Volumes/{ld.id}/": {
        "@odata.type": "#Volume.v1_9_0.Volume", "Id": ld.id,
        "CapacityBytes": _bytes(ld.size, 1024), "Status": _status(ld.status),
        "RAIDType": _RAID_TYPES.get(ld.raid, f"RAID{ld.raid}"),
    } for ld in ctrl.logical_drives}
    drives = {f"{path}Drives/{i}/": {
        "@odata.type": "#Drive.v1_17_0.Drive", "Id": str(i),
        "PhysicalLocation": {"PartLocation": {"LocationType": "Bay", "ServiceLabel":
                             "Slot={}:Port={}:Box={}:Bay={}".format(ctrl.slot, *pd.id.split(":"))}},
        "Protocol": pd.interface, "MediaType": "SSD" if pd.ssd else "HDD",
        "CapacityBytes": _bytes(pd.size, 1000), "Status": _status(pd.status),
        "Revision": pd.firmware, **_given(Model=pd.model, SerialNumber=pd.serial),
    } for i, pd in enumerate(ctrl.physical_drives)}
    docs[path] = {"@odata.id": path, "@odata.type": "#Storage.v1_15_0.Storage",
                  "Id": path.split("/")[-2], "Name": ctrl.model,
                  "Controllers": {"@odata.id": f"{path}Controllers/"},
                  "Volumes": {"@odata.id": f"{path}Volumes/"},
                  "Drives": [{"@odata.id": p} for p in drives]}
    _add(docs, f"{path}Controllers/", {f"{path}Controllers/0/": controller})
    _add(docs, f"{path}Volumes/", volumes)
    docs.update({p: {"@odata.id": p, **doc} for p, doc in drives.items()})
    return path


def _add(docs: dict[str, dict], where: str, members: dict[str, dict]) -> None:
    """A collection at ``where`` and its members, each with its ``@odata.id``."""
    docs[where] = _collection(where, list(members))
    docs.update({p: {"@odata.id": p, **doc} for p, doc in members.items()})


def _collection(path: str, members: list[str]) -> dict:
    return {"@odata.id": path, "Members": [{"@odata.id": m} for m in members],
            "Members@odata.count": len(members)}


def _health(status: str | None) -> str | None:
    """The CLI's status word as a Redfish ``Health``: OK; Critical for a failure (``Failed``,
    ``Failed (Replace Batteries)``); Warning for any other."""
    if status is None:
        return None
    return "OK" if status == "OK" else "Critical" if status.startswith("Failed") else "Warning"


def _status(status: str | None) -> dict:
    return {"Health": _health(status), "State": "Enabled"}


def _cache_status(ctrl: Controller) -> dict:
    """The cache module's: ``Absent`` without one, ``Disabled`` while the CLI says anything
    but OK; its health ``Critical`` only when the CLI says it failed (a cache disabled for
    its battery is a healthy module)."""
    status = ctrl.cache.status or ""
    if not ctrl.cache.present:
        return {"State": "Absent"}
    return {"State": "Enabled" if status == "OK" else "Disabled",
            "Health": "Critical" if status.startswith("Failed") else "OK"}


def _given(**properties: object) -> dict:
    return {key: value for key, value in properties.items() if value is not None}


def _bytes(text: str, base: int) -> int | None:
    """``'279.4 GB'`` in bytes: the CLI's logical drive sizes are binary (``base`` 1024),
    its physical drive sizes decimal, as on the label (1000)."""
    match = _SIZE.match(text)
    if match is None:
        return None
    return round(float(match.group(1)) * base ** ("KMGT".index(match.group(2).upper()) + 1))


def _mib(size: int | None) -> int | None:
    return None if size is None else round(size / MIB)
