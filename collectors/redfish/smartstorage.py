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
    cache_status,
    link,
    linked,
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

_MODES = ("raid", "hba", "mixed")  # CurrentOperatingMode's values, the model's words
_ON_OFF = {"enabled": True, "disabled": False}
# HPE's LogicalDriveStatusReasons (HpeSmartStorageLogicalDrive.v2_3_0) that have a state of
# their own, each in the word of the drive tables (common/model.py, LOGICAL_DRIVE_STATES) for
# it; every other value (docs/redfish.md lists HPE's) has none: "other", which the stated
# health overrules. ("Recovering" is HPE's Interim Recovery Mode: a drive lost, no rebuild)
LOGICAL_REASONS = {
    "Ok": "ok", "Failed": "failed", "Recovering": "interim_recovery_mode",
    "ReadyForRebuild": "ready_for_rebuild", "Rebuilding": "rebuilding",
    "WrongDrive": "wrong_drive_replaced", "BadConnect": "bad_drive_connection",
    "Shutdown": "failed", "Expanding": "expanding", "QueuedForExpansion": "queued_for_expansion",
    "Erasing": "erasing", "PredictiveSpareRebuildReady": "ready_for_rebuild",
    "UnencryptedToEncryptedInProgress": "transforming", "NewKeyRekeyInProgress": "transforming",
}
# HPE's DiskDriveStatusReasons (HpeSmartStorageDiskDrive.v2_1_0) likewise
# (PHYSICAL_DRIVE_STATES); "None" is no reason at all: Status.Health says
DISK_REASONS: dict[str, str | None] = {
    "None": None, "CommunicationFailure": "failed", "EraseInProgress": "erase_in_progress",
    "QueuedForErase": "erasing", "EraseCompleted": "erase_complete", "Failed": "failed",
    "PredictiveFail": "predictive_failure", "FailedDueToPredictiveSpareActivation": "failed",
    "Rebuilding": "rebuilding", "Unrecoverable": "failed",
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
        mode=rf.mode if rf.mode in _MODES else None,
        cache=Cache(
            present=cache_present(rf.cache_module_state, rf.cache_size_mib),
            status=cache_status(rf.cache_module_state, rf.cache_module_health),
            size_bytes=mib_bytes(rf.cache_size_mib),
            read_percent=read,
            write_percent=None if read is None else 100 - read,
            no_battery_write_cache=rf.no_battery_write_cache,
            drive_write_cache=_ON_OFF.get(rf.drive_write_cache or ""),
        ),
        backup_power=backup_power(rf.backup_power, battery),
        logical_drives=[_logical_drive(p, d) for p, d in linked(
            documents, link(doc, "LogicalDrives"), "LogicalDrives", notices)],
        physical_drives=[_physical_drive(p, d) for p, d in linked(
            documents, link(doc, "PhysicalDrives"), "PhysicalDrives", notices)],
        notices=notices,
        raw=_raw(doc, SmartArray),
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


def _status(said: list[str], health: str | None, table: Mapping[str, str | None],
            states: dict[str, str]) -> tuple[str | None, str | None]:
    """The state word and the text it came from: the first status reason ``table`` gives a
    state (in the contract's word), unless ``Status.Health`` says worse of a state the check
    counts as healthy (``states``); else the health the iLO states; else ``ok`` for an ``Ok``
    reason. A reason with no state of its own (``other``) adds its text, never a state: with
    no health stated, it leaves the status ``other``."""
    words = [table.get(reason, OTHER) for reason in said]
    named = [w for w in words if w not in (None, "ok", OTHER)]
    text = ", ".join(r for r, w in zip(said, words, strict=True) if w is not None) or None
    stated = word(health)
    if named and (stated in (None, "ok") or drive_class(states, named[0]) not in _HEALTHY):
        return named[0], text
    if stated is None:
        return OTHER if OTHER in words else "ok" if "ok" in words else None, text
    return stated, (text or health) if stated == "ok" or text is None else \
        f"{text}; Status.Health {health}"


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
        raw=_raw(doc, SmartLogicalDrive),
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
        raw=_raw(doc, SmartDiskDrive),
    )


def _raw(doc: dict, model: type[Payload]) -> list[tuple[str, str]]:
    """The properties ``model`` reads that ``doc`` has, as ``(name, value)`` pairs for
    ``raw``: a string as it is, any other value as JSON."""
    keys = dict.fromkeys(alias.path[0] if isinstance(alias, AliasPath) else alias
                         for alias in (f.validation_alias for f in model.model_fields.values()))
    return [(key, doc[key] if isinstance(doc[key], str) else json.dumps(doc[key], sort_keys=True))
            for key in keys if isinstance(key, str) and key in doc]
