"""iLO 6 and later: the DMTF ``Storage`` model -> status model controllers. Pure: no I/O.

Properties from the DMTF Redfish schemas ``Storage``, ``StorageController`` (with its
``CacheSummary``), ``Drive`` and ``Volume`` (redfish.dmtf.org/schemas/v1/). That model has no
cache ratio, no no-battery write cache switch, no drive write cache switch of the controller
and no backup power on the controller: those fields stay ``None`` (:data:`LACKS`).
"""

from __future__ import annotations

import re

from pydantic import AliasPath, Field

from smartarray_agent.collectors.redfish.resources import (
    OTHER,
    Celsius,
    Count,
    Documents,
    Integer,
    Payload,
    Percent,
    Text,
    Word,
    cache_present,
    cache_status,
    fetched,
    linked,
    mib_bytes,
    odata_id,
    raid_words,
    word,
)
from smartarray_agent.common.model import Cache, Controller, LogicalDrive, PhysicalDrive

_SLOT = re.compile(r"^\s*slot\s*[=:]?\s*(\w+)\s*$", re.I)
_PORT_BOX_BAY = re.compile(r"\b(Port|Box|Bay)=(\w+)")  # of Slot=1:Port=1I:Box=1:Bay=2
_CACHE = "CacheSummary"  # a StorageController's
LACKS = ("redfish: the iLO's DMTF Storage model gives no cache ratio, no no-battery write "
         "cache switch, no drive write cache switch and no backup power status or charge of "
         "the controller: they are unknown (null)")


def controllers(storage: dict, documents: Documents) -> list[Controller]:
    """The controllers of one ``Storage`` resource, each with the storage's drives and
    volumes (a Storage resource is one controller's view on HPE's iLO)."""
    notices: list[str] = []
    found = _storage_controllers(storage, documents, notices)
    drives = [drive for p, d in fetched(documents, drive_links(storage), notices)
              if (drive := _drive(p, d)) is not None]
    volumes = [_volume(p, d) for p, d in linked(documents, odata_id(storage.get("Volumes")),
                                                "Volumes", notices)]
    return [_controller(doc, drives, volumes, notices) for doc in found]


def _storage_controllers(storage: dict, documents: Documents,
                         notices: list[str]) -> list[dict]:
    """``Controllers`` (the collection, Storage v1.15 and later), else the deprecated inline
    ``StorageControllers`` array. Where the collection or one of its members was not read,
    the inline controllers, which the Storage resource already carries, are used, and a
    notice says so: a controller the iLO gave is never dropped."""
    carried = carried_controllers(storage)
    where = controllers_link(storage)
    if where is None:
        return carried
    missing: list[str] = []
    found = linked(documents, where, "Controllers", missing)
    if not missing or not carried:
        notices.extend(missing)
        return [doc for _, doc in found]
    notices.append(f"redfish: {where} was not read in full: the controller is the one the "
                   "Storage resource carries (StorageControllers)")
    return carried


def carried_controllers(storage: dict) -> list[dict]:
    """The controllers a Storage resource carries inline (``StorageControllers``)."""
    inline = storage.get("StorageControllers")
    return [c for c in inline if isinstance(c, dict)] if isinstance(inline, list) else []


class StorageController(Payload):
    """A DMTF ``StorageController``: a member of the ``Controllers`` collection, or an
    entry of the inline ``StorageControllers[]``."""

    label: Text = Field(None, validation_alias=AliasPath("Location", "PartLocation",
                                                         "ServiceLabel"))
    model: Text = Field(None, alias="Model")
    name: Text = Field(None, alias="Name")
    serial: Text = Field(None, alias="SerialNumber")
    firmware: Text = Field(None, alias="FirmwareVersion")
    health: Word = Field(None, validation_alias=AliasPath("Status", "Health"))
    cache_size_mib: Integer = Field(None, validation_alias=AliasPath(_CACHE, "TotalCacheSizeMiB"))
    cache_state: Word = Field(None, validation_alias=AliasPath(_CACHE, "Status", "State"))
    cache_health: Word = Field(None, validation_alias=AliasPath(_CACHE, "Status", "Health"))


class Drive(Payload):
    """A DMTF ``Drive``."""

    label: Text = Field(None, validation_alias=AliasPath("PhysicalLocation", "PartLocation",
                                                         "ServiceLabel"))
    id: Text = Field(None, alias="Id")
    protocol: Text = Field(None, alias="Protocol")
    capacity_bytes: Count = Field(None, alias="CapacityBytes")
    health: Text = Field(None, validation_alias=AliasPath("Status", "Health"))
    state: Word = Field(None, validation_alias=AliasPath("Status", "State"))
    model: Text = Field(None, alias="Model")
    serial: Text = Field(None, alias="SerialNumber")
    revision: Text = Field(None, alias="Revision")
    life_left_percent: Percent = Field(None, alias="PredictedMediaLifeLeftPercent")
    # iLO 7's, of a direct-attached NVMe drive
    temperature_c: Celsius = Field(None, validation_alias=AliasPath(
        "Oem", "Hpe", "CurrentTemperatureCelsius"))
    power_on_hours: Count = Field(None, validation_alias=AliasPath("Oem", "Hpe", "PowerOnHours"))


class Volume(Payload):
    """A DMTF ``Volume``."""

    id: Text = Field(None, alias="Id")
    capacity_bytes: Count = Field(None, alias="CapacityBytes")
    raid_type: Text = Field(None, alias="RAIDType")
    health: Text = Field(None, validation_alias=AliasPath("Status", "Health"))


def _controller(doc: dict, drives: list[PhysicalDrive], volumes: list[LogicalDrive],
                notices: list[str]) -> Controller:
    sc = StorageController.model_validate(doc)
    slot = _SLOT.match(sc.label or "")
    return Controller(
        slot=slot.group(1).lower() if slot else None,
        location=None if slot else sc.label,
        model=sc.model or sc.name or "storage controller",
        serial=sc.serial,
        firmware=sc.firmware,
        status=sc.health,
        cache=Cache(
            present=cache_present(sc.cache_state, sc.cache_size_mib),
            status=cache_status(sc.cache_state, sc.cache_health),
            size_bytes=mib_bytes(sc.cache_size_mib),
        ),
        logical_drives=volumes,
        physical_drives=drives,
        notices=[*notices, LACKS],
    )


def _drive(path: str, doc: dict) -> PhysicalDrive | None:
    """The drive; None for an absent one (an empty bay, which iLO 6 lists among Drives)."""
    drive = Drive.model_validate(doc)
    if drive.state == "absent":
        return None
    where = dict(_PORT_BOX_BAY.findall(drive.label or ""))
    return PhysicalDrive(
        drive_id=drive.label or drive.id or path,
        port=where.get("Port"),
        box=where.get("Box"),
        bay=where.get("Bay"),
        interface=drive.protocol,
        size_bytes=drive.capacity_bytes,
        status=word(drive.health),
        status_text=drive.health,
        model=drive.model,
        serial=drive.serial,
        firmware=drive.revision,
        usage_remaining_percent=drive.life_left_percent,
        temperature_c=drive.temperature_c,
        power_on_hours=drive.power_on_hours,
    )


def _volume(path: str, doc: dict) -> LogicalDrive:
    volume = Volume.model_validate(doc)
    return LogicalDrive(
        drive_id=volume.id or path,
        size_bytes=volume.capacity_bytes,
        raid=_raid_type(volume.raid_type),
        status=word(volume.health),
        status_text=volume.health,
    )


# DMTF's RAIDType (Volume v1.3 and later) in the CLI's words, as iLO 5's Raid is
# (resources.raid_words): HPE's 1ADM and 10ADM are DMTF's RAID1Triple and RAID10Triple; the
# levels no Smart Array has are "RAID " and the level as DMTF spells it. "None" (no RAID
# level) is null: the contract has no word for it, and raw keeps it.
RAID_TYPES: dict[str, str | None] = {
    "RAID0": "0", "RAID1": "1", "RAID3": "3", "RAID4": "4", "RAID5": "5", "RAID6": "6",
    "RAID10": "10", "RAID01": "01", "RAID6TP": "6TP", "RAID1E": "1E", "RAID50": "50",
    "RAID60": "60", "RAID00": "00", "RAID10E": "10E", "RAID1Triple": "1ADM",
    "RAID10Triple": "10ADM", "None": None,
}


def _raid_type(raid_type: str | None) -> str | None:
    """DMTF's ``RAIDType`` in the CLI's words: ``RAID10`` -> ``RAID 1+0``; a value DMTF
    does not define is ``other``."""
    if raid_type is None:
        return None
    return raid_words(RAID_TYPES[raid_type]) if raid_type in RAID_TYPES else OTHER


def drive_links(storage: dict) -> list[str]:
    """The paths of a Storage resource's ``Drives`` (an array of ``{"@odata.id": ...}``)."""
    items = storage.get("Drives")
    return [p for item in (items if isinstance(items, list) else []) if (p := odata_id(item))]


def controllers_link(storage: dict) -> str | None:
    """The path of a Storage resource's ``Controllers`` collection."""
    return odata_id(storage.get("Controllers"))


def collection_links(storage: dict) -> list[str]:
    """The collections (``Controllers``, ``Volumes``) a Storage resource links to."""
    return [p for name in ("Controllers", "Volumes") if (p := odata_id(storage.get(name)))]

