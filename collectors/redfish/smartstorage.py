"""iLO 5's HPE OEM storage model -> status model controllers. Pure: no I/O.

Properties and values from HPE's iLO 5 Redfish reference (resource definitions of
``HpeSmartStorageArrayController.v2_2_0``, ``HpeSmartStorageLogicalDrive.v2_3_0`` and
``HpeSmartStorageDiskDrive.v2_1_0``); docs/redfish.md lists which field comes from which
property. A property that is absent, of the wrong type or out of range leaves its field
``None``; no field is filled from a property that means something else.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from smartarray_agent.collectors.redfish.resources import (
    Battery,
    array_controller,
    as_dict,
    boolean,
    fetched,
    integer,
    members,
    mib_bytes,
    number,
    raid_words,
    text,
    word,
)
from smartarray_agent.common.model import (
    BackupPower,
    Cache,
    Controller,
    LogicalDrive,
    PhysicalDrive,
)

# CurrentOperatingMode -> the model's mode words
_MODES = {"raid": "raid", "hba": "hba", "mixed": "mixed"}
_ON_OFF = {"enabled": True, "disabled": False}
# LogicalDriveStatusReasons whose word differs from the CLI's word for the same state
# ("Recovering" is HPE's Interim Recovery Mode: a drive lost, not a rebuild)
_LOGICAL_REASONS = {"recovering": "interim_recovery_mode", "wrong_drive": "wrong_drive_replaced",
                    "bad_connect": "bad_drive_connection"}
# DiskDriveStatusReasons likewise
_DISK_REASONS = {"predictive_fail": "predictive_failure", "erase_completed": "erase_complete",
                 "failed_due_to_predictive_spare_activation": "failed"}
_NO_REASON = ("none", "ok")
# AccelerationMethod -> whether the controller caches the logical drive; SmartCache (a
# caching logical drive) does not say, so it stays unknown
_ACCELERATION = {"controller_cache": True, "none": False, "io_bypass": False}
_PORT_BOX_BAY = re.compile(r"^(\w+):(\w+):(\w+)$")

Documents = Mapping[str, dict]


def controller(path: str, doc: dict, documents: Documents, battery: Battery | None,
               battery_doc: dict | None) -> Controller:
    """One ``HpeSmartStorageArrayController`` with its drives; ``battery`` is the Smart
    Storage Battery mapped to it (collectors/redfish/merge.py, rule 1), or None."""
    rf = array_controller(path, doc)
    notices: list[str] = []
    links = as_dict(doc.get("Links"))
    read = integer(doc.get("ReadCachePercent"))
    read = read if read is not None and 0 <= read <= 100 else None
    size = rf.cache_size_mib
    return Controller(
        slot=rf.slot,
        location=rf.location if rf.slot is None else None,
        model=rf.model or "Smart Array (the iLO gives no Model)",
        serial=rf.serial,
        firmware=firmware(doc),
        status=rf.health,
        mode=_MODES.get(word(doc.get("CurrentOperatingMode")) or ""),
        cache=Cache(
            present=_present(as_dict(doc.get("CacheModuleStatus")).get("State")),
            status=rf.cache_module_health,
            size_bytes=mib_bytes(size),
            read_percent=read,
            write_percent=None if read is None else 100 - read,
            no_battery_write_cache=boolean(doc.get("WriteCacheWithoutBackupPowerEnabled")),
            drive_write_cache=_ON_OFF.get(word(doc.get("DriveWriteCache")) or ""),
        ),
        backup_power=backup_power(rf.backup_power, battery, battery_doc),
        logical_drives=[_logical_drive(p, d) for p, d in _linked(
            documents, links, "LogicalDrives", notices)],
        physical_drives=[_physical_drive(p, d) for p, d in _linked(
            documents, links, "PhysicalDrives", notices)],
        notices=notices,
        raw=_raw(doc, ("Location", "Model", "SerialNumber", "Status", "CurrentOperatingMode",
                       "CacheModuleStatus", "CacheMemorySizeMiB", "ReadCachePercent",
                       "WriteCacheWithoutBackupPowerEnabled", "DriveWriteCache",
                       "BackupPowerSourceStatus")),
    )


# HPE's battery Health -> the CLI's backup power status word, where they differ: a
# Critical Smart Storage Battery is the one the CLI prints as "Failed (Replace Batteries)"
_BATTERY_STATUS = {"critical": "failed"}


def backup_power(status: str | None, battery: Battery | None,
                 battery_doc: dict | None) -> BackupPower:
    """``BackupPowerSourceStatus`` (normalised) and the battery that backs the controller.

    ``NotPresent``: no backup power (count 0). ``PresentAndCharging``: ``recharging``.
    Otherwise the status is the battery's ``Status.Health``, ``Critical`` in the CLI's word
    for a battery to replace, ``failed``; with no battery mapped,
    ``PresentAndCharged`` ("present and fully charged") is ``ok`` and ``Present``
    ("charging information is unknown") is unknown."""
    if status == "not_present":
        return BackupPower(count=0)
    charging = status == "present_and_charging"
    if battery is None:
        return BackupPower(status="recharging" if charging else
                           "ok" if status == "present_and_charged" else None,
                           status_text="PresentAndCharging" if charging else None)
    health = text(as_dict((battery_doc or {}).get("Status")).get("Health"))
    return BackupPower(
        source="batteries", count=1,
        status="recharging" if charging else _BATTERY_STATUS.get(battery.health or "",
                                                                   battery.health),
        status_text="PresentAndCharging" if charging else health,
        charge_percent=battery.charge_percent,
    )


def firmware(doc: dict) -> str | None:
    """``FirmwareVersion.Current.VersionString``."""
    return text(as_dict(as_dict(doc.get("FirmwareVersion")).get("Current")).get("VersionString"))


def _present(state: object) -> bool | None:
    """``CacheModuleStatus.State``: ``Absent`` is no module, any other state one."""
    name = word(state)
    return None if name is None else name != "absent"


def _linked(documents: Documents, links: dict, name: str,
            notices: list[str]) -> list[tuple[str, dict]]:
    """The members of the collection ``Links.<name>`` points to, as fetched."""
    where = as_dict(links.get(name)).get("@odata.id")
    if not isinstance(where, str):
        notices.append(f"redfish: the iLO gives no Links.{name}: no {name} known")
        return []
    collection = documents.get(where)
    if collection is None or not isinstance(collection.get("Members"), list):
        notices.append(f"redfish: {where} was not read: no {name} known")
        return []
    return fetched(documents, members(collection, where), notices)


def _status(reasons: object, health: object, renames: dict[str, str]) -> tuple[str | None,
                                                                                str | None]:
    """The state word and the text it came from: the first status reason that is not
    ``None``/``Ok`` (renamed to the CLI's word), else ``ok`` for an ``Ok`` reason, else the
    resource's ``Status.Health``."""
    said = [r.strip() for r in reasons if isinstance(r, str) and r.strip()] if isinstance(
        reasons, list) else []
    words = [word(r) for r in said]
    problems = [w for w in words if w not in _NO_REASON]
    if problems:
        first = problems[0] or ""
        return renames.get(first, first), ", ".join(said)
    if "ok" in words:
        return "ok", ", ".join(said)
    return word(health), text(health)


def _logical_drive(path: str, doc: dict) -> LogicalDrive:
    ld_number = integer(doc.get("LogicalDriveNumber"))
    status, status_text = _status(doc.get("LogicalDriveStatusReasons"),
                                  as_dict(doc.get("Status")).get("Health"), _LOGICAL_REASONS)
    capacity = integer(doc.get("CapacityMiB"))
    return LogicalDrive(
        drive_id=str(ld_number) if ld_number is not None else text(doc.get("Id")) or path,
        size_bytes=mib_bytes(capacity),
        raid=raid_words(text(doc.get("Raid"))),
        status=status,
        status_text=status_text,
        caching=_ACCELERATION.get(word(doc.get("AccelerationMethod")) or ""),
        raw=_raw(doc, ("LogicalDriveNumber", "CapacityMiB", "Raid", "Status",
                       "LogicalDriveStatusReasons", "AccelerationMethod")),
    )


def _physical_drive(path: str, doc: dict) -> PhysicalDrive:
    location = text(doc.get("Location"))
    parts = _PORT_BOX_BAY.match(location or "") if word(
        doc.get("LocationFormat")) == "controller_port_box_bay" else None
    status, status_text = _status(doc.get("DiskDriveStatusReasons"),
                                  as_dict(doc.get("Status")).get("Health"), _DISK_REASONS)
    capacity = integer(doc.get("CapacityMiB"))
    wear = number(doc.get("SSDEnduranceUtilizationPercentage"), 0, math.inf)
    erase = number(doc.get("EraseCompletionPercentage"), 0, 100)
    hours = integer(doc.get("PowerOnHours"))
    temperature = number(doc.get("CurrentTemperatureCelsius"), -273, math.inf)
    return PhysicalDrive(
        drive_id=location or text(doc.get("Id")) or path,
        port=parts.group(1) if parts else None,
        box=parts.group(2) if parts else None,
        bay=parts.group(3) if parts else None,
        interface=_interface(text(doc.get("InterfaceType")), word(doc.get("MediaType"))),
        size_bytes=mib_bytes(capacity),
        status=status,
        status_text=status_text,
        progress_percent=erase,
        model=text(doc.get("Model")),
        serial=text(doc.get("SerialNumber")),
        firmware=firmware(doc),
        temperature_c=temperature,
        usage_remaining_percent=None if wear is None else 100 - wear,
        power_on_hours=hours if hours is not None and hours >= 0 else None,
        raw=_raw(doc, ("Location", "LocationFormat", "InterfaceType", "MediaType",
                       "CapacityMiB", "Status", "DiskDriveStatusReasons", "Model",
                       "SerialNumber", "CurrentTemperatureCelsius",
                       "SSDEnduranceUtilizationPercentage", "EraseCompletionPercentage",
                       "PowerOnHours")),
    )


def _interface(interface: str | None, media: str | None) -> str | None:
    """``SATA`` of an ``SSD`` -> ``Solid State SATA``, as the CLI prints an SSD's
    ``Interface Type``."""
    return f"Solid State {interface}" if interface and media == "ssd" else interface


def _raw(doc: dict, keys: tuple[str, ...]) -> list[tuple[str, str]]:
    """The properties read, as ``(name, value)`` pairs for ``raw``: a string as it is, any
    other value as JSON."""
    return [(key, doc[key] if isinstance(doc[key], str) else json.dumps(doc[key], sort_keys=True))
            for key in keys if key in doc]
