"""iLO 4's and iLO 5's HPE OEM storage model -> status model controllers. Pure: no I/O.

Properties and values from HPE's iLO 5 Redfish reference (resource definitions of
``HpeSmartStorageArrayController.v2_2_0``, ``HpeSmartStorageLogicalDrive.v2_3_0`` and
``HpeSmartStorageDiskDrive.v2_1_0``) and iLO 4's (``HpSmartStorage...``: the same names, fewer
properties, links also in the HAL form); docs/redfish.md lists which field comes from which
property. A property that is absent, of the wrong type or out of range leaves its field
``None``; no field is filled from a property that means something else.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from smartarray_agent.collectors.redfish.merge import PRESENT
from smartarray_agent.collectors.redfish.resources import (
    OTHER,
    Battery,
    array_controller,
    as_dict,
    boolean,
    cache_present,
    fetched,
    integer,
    is_collection,
    link,
    members,
    mib_bytes,
    number,
    raid_words,
    text,
    word,
)
from smartarray_agent.model import (
    LOGICAL_DRIVE_STATES,
    PHYSICAL_DRIVE_STATES,
    BackupPower,
    Cache,
    Controller,
    LogicalDrive,
    PhysicalDrive,
    drive_class,
)

# CurrentOperatingMode -> the model's mode words
_MODES = {"raid": "raid", "hba": "hba", "mixed": "mixed"}
_ON_OFF = {"enabled": True, "disabled": False}
# HPE's LogicalDriveStatusReasons (HpeSmartStorageLogicalDrive.v2_3_0), each in the word of
# the drive tables (agent/model.py, LOGICAL_DRIVE_STATES) for the same state, or "other"
# where no listed word means it; a value HPE does not define is "other" too.
# ("Recovering" is HPE's Interim Recovery Mode: a drive lost, not a rebuild)
LOGICAL_REASONS = {
    "Unknown": "other", "Ok": "ok", "Failed": "failed", "Unconfigured": "other",
    "Recovering": "interim_recovery_mode", "ReadyForRebuild": "ready_for_rebuild",
    "Rebuilding": "rebuilding", "WrongDrive": "wrong_drive_replaced",
    "BadConnect": "bad_drive_connection", "Overheating": "other", "Shutdown": "failed",
    "Expanding": "expanding", "NotAvailable": "other",
    "QueuedForExpansion": "queued_for_expansion", "MultipathAccessDegraded": "other",
    "Erasing": "erasing", "PredictiveSpareRebuildReady": "ready_for_rebuild",
    "RapidParityInitInProgress": "other", "RapidParityInitPending": "other",
    "NoAccessEncryptedNoControllerKey": "other",
    "UnencryptedToEncryptedInProgress": "transforming", "NewKeyRekeyInProgress": "transforming",
    "NoAccessEncryptedControllerEncryptionNotEnabled": "other",
    "UnencryptedToEncryptedNotStarted": "other", "NewLogDrvKeyRekeyRequestReceived": "other",
}
# HPE's DiskDriveStatusReasons (HpeSmartStorageDiskDrive.v2_1_0) likewise
# (PHYSICAL_DRIVE_STATES); "None" is no reason at all: Status.Health says
DISK_REASONS: dict[str, str | None] = {
    "None": None, "Unknown": "other", "CommunicationFailure": "failed", "Zoned": "other",
    "EraseInProgress": "erase_in_progress", "QueuedForErase": "erasing",
    "EraseCompleted": "erase_complete", "EraseFailed": "other", "EraseAborted": "other",
    "Failed": "failed", "NonAuthenticDrive": "other", "CarrierCommunicationFailure": "other",
    "PredictiveFail": "predictive_failure", "NotSupported": "other", "SizeNotValid": "other",
    "FailedDueToPredictiveSpareActivation": "failed", "Rebuilding": "rebuilding",
    "TransientDataDrive": "other", "Unrecoverable": "failed",
}
# the drive classes (agent/model.py) the check counts as healthy: a Status.Health of
# Warning or Critical wins over a reason of these
_HEALTHY = ("ok", "progressing")
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
            present=cache_present(as_dict(doc.get("CacheModuleStatus")).get("State"), size),
            status=rf.cache_module_health,
            size_bytes=mib_bytes(size),
            read_percent=read,
            write_percent=None if read is None else 100 - read,
            no_battery_write_cache=boolean(doc.get("WriteCacheWithoutBackupPowerEnabled")),
            drive_write_cache=_ON_OFF.get(word(doc.get("DriveWriteCache")) or ""),
        ),
        backup_power=backup_power(rf.backup_power, battery, battery_doc),
        logical_drives=[_logical_drive(p, d) for p, d in _linked(
            documents, doc, "LogicalDrives", notices)],
        physical_drives=[_physical_drive(p, d) for p, d in _linked(
            documents, doc, "PhysicalDrives", notices)],
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
    for a battery to replace, ``failed``; with no battery mapped, backup power said present
    is one source of a kind and charge unknown, ``PresentAndCharged`` ("present and fully
    charged") ``ok`` and ``Present`` ("charging information is unknown") of a status
    unknown."""
    if status == "not_present":
        return BackupPower(count=0)
    charging = status == "present_and_charging"
    if battery is None:
        return BackupPower(count=1 if status in PRESENT else None,
                           status="recharging" if charging else
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


def _linked(documents: Documents, doc: dict, name: str,
            notices: list[str]) -> list[tuple[str, dict]]:
    """The members of the collection the controller's ``Links.<name>`` (iLO 4:
    ``links.<name>``) points to, as fetched."""
    where = link(doc, name)
    if where is None:
        notices.append(f"redfish: the iLO gives no Links.{name}: no {name} known")
        return []
    collection = documents.get(where)
    if collection is None or not is_collection(collection):
        notices.append(f"redfish: {where} was not read: no {name} known")
        return []
    return fetched(documents, members(collection, where), notices)


def _status(reasons: object, health: object, table: Mapping[str, str | None],
            states: dict[str, str]) -> tuple[str | None, str | None]:
    """The state word and the text it came from: the first status reason that is a problem
    (in the contract's word, ``table``), else ``ok`` for an ``Ok`` reason, else the
    resource's ``Status.Health``. The worse of the two wins: a ``Status.Health`` other than
    ``OK`` replaces a reason whose state the check counts as healthy (``states``)."""
    said = [r.strip() for r in reasons if isinstance(r, str) and r.strip()] if isinstance(
        reasons, list) else []
    words = [table.get(r, OTHER) for r in said]
    problems = [w for w in words if w not in (None, "ok")]
    health_word, health_text = word(health), text(health)
    if not problems and "ok" not in words:
        return health_word, health_text
    status = problems[0] if problems else "ok"
    if health_word not in (None, "ok") and drive_class(states, status) in _HEALTHY:
        return health_word, f"{', '.join(said)}; Status.Health {health_text}"
    return status, ", ".join(said)


def _logical_drive(path: str, doc: dict) -> LogicalDrive:
    ld_number = integer(doc.get("LogicalDriveNumber"))
    status, status_text = _status(doc.get("LogicalDriveStatusReasons"),
                                  as_dict(doc.get("Status")).get("Health"), LOGICAL_REASONS,
                                  LOGICAL_DRIVE_STATES)
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
                                  as_dict(doc.get("Status")).get("Health"), DISK_REASONS,
                                  PHYSICAL_DRIVE_STATES)
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
