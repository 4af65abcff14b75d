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
import re
from collections.abc import Mapping

from pydantic import AliasPath, Field

from smartarray_agent.collectors.redfish.merge import PRESENT, battery_status
from smartarray_agent.collectors.redfish.resources import (
    FIRMWARE,
    OTHER,
    Amount,
    ArrayController,
    Battery,
    Celsius,
    Count,
    Documents,
    Flag,
    Integer,
    Payload,
    Percent,
    Share,
    Text,
    Texts,
    Word,
    cache_present,
    fetched,
    is_collection,
    link,
    members,
    mib_bytes,
    raid_words,
    word,
)
from smartarray_agent.common.model import (
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
# the drive tables (common/model.py, LOGICAL_DRIVE_STATES) for the same state, or "other"
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
# the drive classes (common/model.py) the check counts as healthy: a Status.Health of
# Warning or Critical wins over a reason of these
_HEALTHY = ("ok", "progressing")
# AccelerationMethod -> whether the controller caches the logical drive; SmartCache (a
# caching logical drive) does not say, so it stays unknown
_ACCELERATION = {"controller_cache": True, "none": False, "io_bypass": False}
_PORT_BOX_BAY = re.compile(r"^(\w+):(\w+):(\w+)$")


class SmartArray(ArrayController):
    """What the snapshot reads of an ``HpeSmartStorageArrayController`` beyond what the
    battery mapping reads (:class:`ArrayController`)."""

    firmware: Text = Field(None, validation_alias=FIRMWARE)
    mode: Word = Field(None, alias="CurrentOperatingMode")
    cache_module_state: Word = Field(None, validation_alias=AliasPath("CacheModuleStatus",
                                                                      "State"))
    read_cache_percent: Share = Field(None, alias="ReadCachePercent")
    no_battery_write_cache: Flag = Field(None, alias="WriteCacheWithoutBackupPowerEnabled")
    drive_write_cache: Word = Field(None, alias="DriveWriteCache")


class SmartLogicalDrive(Payload):
    """An ``HpeSmartStorageLogicalDrive`` (iLO 4: ``HpSmartStorageLogicalDrive``)."""

    number: Integer = Field(None, alias="LogicalDriveNumber")
    id: Text = Field(None, alias="Id")
    capacity_mib: Count = Field(None, alias="CapacityMiB")
    raid: Text = Field(None, alias="Raid")
    health: Text = Field(None, validation_alias=AliasPath("Status", "Health"))
    reasons: Texts = Field(default_factory=list, alias="LogicalDriveStatusReasons")
    acceleration: Word = Field(None, alias="AccelerationMethod")


class SmartDiskDrive(Payload):
    """An ``HpeSmartStorageDiskDrive`` (iLO 4: ``HpSmartStorageDiskDrive``)."""

    location: Text = Field(None, alias="Location")
    location_format: Word = Field(None, alias="LocationFormat")
    id: Text = Field(None, alias="Id")
    interface: Text = Field(None, alias="InterfaceType")
    media: Word = Field(None, alias="MediaType")
    capacity_mib: Count = Field(None, alias="CapacityMiB")
    health: Text = Field(None, validation_alias=AliasPath("Status", "Health"))
    reasons: Texts = Field(default_factory=list, alias="DiskDriveStatusReasons")
    model: Text = Field(None, alias="Model")
    serial: Text = Field(None, alias="SerialNumber")
    firmware: Text = Field(None, validation_alias=FIRMWARE)
    temperature_c: Celsius = Field(None, alias="CurrentTemperatureCelsius")
    worn_percent: Amount = Field(None, alias="SSDEnduranceUtilizationPercentage")
    erase_percent: Percent = Field(None, alias="EraseCompletionPercentage")
    power_on_hours: Count = Field(None, alias="PowerOnHours")


def controller(path: str, doc: dict, documents: Documents,
               battery: Battery | None) -> Controller:
    """One ``HpeSmartStorageArrayController`` with its drives; ``battery`` is the Smart
    Storage Battery mapped to it (collectors/redfish/merge.py, rule 1), or None."""
    rf = SmartArray.model_validate({**doc, "resource": path})
    notices: list[str] = []
    read = rf.read_cache_percent
    return Controller(
        slot=rf.slot,
        location=rf.location if rf.slot is None else None,
        model=rf.model or "Smart Array (the iLO gives no Model)",
        serial=rf.serial,
        firmware=rf.firmware,
        status=rf.health,
        mode=_MODES.get(rf.mode or ""),
        cache=Cache(
            present=cache_present(rf.cache_module_state, rf.cache_size_mib),
            status=rf.cache_module_health,
            size_bytes=mib_bytes(rf.cache_size_mib),
            read_percent=read,
            write_percent=None if read is None else 100 - read,
            no_battery_write_cache=rf.no_battery_write_cache,
            drive_write_cache=_ON_OFF.get(rf.drive_write_cache or ""),
        ),
        backup_power=backup_power(rf.backup_power, battery),
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


def backup_power(status: str | None, battery: Battery | None) -> BackupPower:
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
    return BackupPower(
        source="batteries", count=1,
        status=battery_status(battery.health, charging),
        status_text="PresentAndCharging" if charging else battery.health_text,
        charge_percent=battery.charge_percent,
    )


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


def _status(said: list[str], health: str | None, table: Mapping[str, str | None],
            states: dict[str, str]) -> tuple[str | None, str | None]:
    """The state word and the text it came from: the first status reason that is a problem
    (in the contract's word, ``table``), else ``ok`` for an ``Ok`` reason, else the
    resource's ``Status.Health``. The worse of the two wins: a ``Status.Health`` other than
    ``OK`` replaces a reason whose state the check counts as healthy (``states``)."""
    words = [table.get(r, OTHER) for r in said]
    problems = [w for w in words if w not in (None, "ok")]
    health_word = word(health)
    if not problems and "ok" not in words:
        return health_word, health
    status = problems[0] if problems else "ok"
    if health_word not in (None, "ok") and drive_class(states, status) in _HEALTHY:
        return health_word, f"{', '.join(said)}; Status.Health {health}"
    return status, ", ".join(said)


def _logical_drive(path: str, doc: dict) -> LogicalDrive:
    ld = SmartLogicalDrive.model_validate(doc)
    status, status_text = _status(ld.reasons, ld.health, LOGICAL_REASONS, LOGICAL_DRIVE_STATES)
    return LogicalDrive(
        drive_id=str(ld.number) if ld.number is not None else ld.id or path,
        size_bytes=mib_bytes(ld.capacity_mib),
        raid=raid_words(ld.raid),
        status=status,
        status_text=status_text,
        caching=_ACCELERATION.get(ld.acceleration or ""),
        raw=_raw(doc, ("LogicalDriveNumber", "CapacityMiB", "Raid", "Status",
                       "LogicalDriveStatusReasons", "AccelerationMethod")),
    )


def _physical_drive(path: str, doc: dict) -> PhysicalDrive:
    pd = SmartDiskDrive.model_validate(doc)
    parts = _PORT_BOX_BAY.match(pd.location or "") if (
        pd.location_format == "controller_port_box_bay") else None
    status, status_text = _status(pd.reasons, pd.health, DISK_REASONS, PHYSICAL_DRIVE_STATES)
    return PhysicalDrive(
        drive_id=pd.location or pd.id or path,
        port=parts.group(1) if parts else None,
        box=parts.group(2) if parts else None,
        bay=parts.group(3) if parts else None,
        # an SSD's as the CLI prints its Interface Type: SATA -> Solid State SATA
        interface=f"Solid State {pd.interface}" if pd.interface and pd.media == "ssd"
        else pd.interface,
        size_bytes=mib_bytes(pd.capacity_mib),
        status=status,
        status_text=status_text,
        progress_percent=pd.erase_percent,
        model=pd.model,
        serial=pd.serial,
        firmware=pd.firmware,
        temperature_c=pd.temperature_c,
        usage_remaining_percent=None if pd.worn_percent is None else 100 - pd.worn_percent,
        power_on_hours=pd.power_on_hours,
        raw=_raw(doc, ("Location", "LocationFormat", "InterfaceType", "MediaType",
                       "CapacityMiB", "Status", "DiskDriveStatusReasons", "Model",
                       "SerialNumber", "CurrentTemperatureCelsius",
                       "SSDEnduranceUtilizationPercentage", "EraseCompletionPercentage",
                       "PowerOnHours")),
    )


def _raw(doc: dict, keys: tuple[str, ...]) -> list[tuple[str, str]]:
    """The properties read, as ``(name, value)`` pairs for ``raw``: a string as it is, any
    other value as JSON."""
    return [(key, doc[key] if isinstance(doc[key], str) else json.dumps(doc[key], sort_keys=True))
            for key in keys if key in doc]
