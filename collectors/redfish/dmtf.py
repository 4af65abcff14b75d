"""iLO 6 and later: the DMTF ``Storage`` model -> status model controllers. Pure: no I/O.

Properties from the DMTF Redfish schemas ``Storage``, ``StorageController`` (with its
``CacheSummary``), ``Drive`` and ``Volume`` (redfish.dmtf.org/schemas/v1/). That model has no
cache ratio, no no-battery write cache switch, no drive write cache switch of the controller
and no backup power on the controller: those fields stay ``None`` (:data:`LACKS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from smartarray_agent.collectors.redfish.resources import (
    as_dict,
    fetched,
    integer,
    members,
    mib_bytes,
    number,
    raid_words,
    text,
    word,
)
from smartarray_agent.common.model import Cache, Controller, LogicalDrive, PhysicalDrive

_SLOT = re.compile(r"^\s*slot\s*[=:]?\s*(\w+)\s*$", re.I)
LACKS = ("redfish: the iLO's DMTF Storage model gives no cache ratio, no no-battery write "
         "cache switch, no drive write cache switch and no backup power status or charge of "
         "the controller: they are unknown (null)")

Documents = Mapping[str, dict]


def controllers(storage_path: str, storage: dict, documents: Documents) -> list[Controller]:
    """The controllers of one ``Storage`` resource, each with the storage's drives and
    volumes (a Storage resource is one controller's view on HPE's iLO)."""
    notices: list[str] = []
    found = _storage_controllers(storage, documents, notices)
    drives = [_drive(p, d) for p, d in _links(storage.get("Drives"), documents, notices)]
    volumes = [_volume(p, d) for p, d in _collection(storage.get("Volumes"), documents,
                                                     "Volumes", notices)]
    return [_controller(doc, drives, volumes, notices) for doc in found]


def _storage_controllers(storage: dict, documents: Documents,
                         notices: list[str]) -> list[dict]:
    """``Controllers`` (the collection, Storage v1.15 and later), else the deprecated inline
    ``StorageControllers`` array."""
    if isinstance(storage.get("Controllers"), dict):
        return [doc for _, doc in _collection(storage["Controllers"], documents, "Controllers",
                                              notices)]
    inline = storage.get("StorageControllers")
    return [c for c in inline if isinstance(c, dict)] if isinstance(inline, list) else []


def _controller(doc: dict, drives: list[PhysicalDrive], volumes: list[LogicalDrive],
                notices: list[str]) -> Controller:
    label = text(as_dict(as_dict(doc.get("Location")).get("PartLocation")).get("ServiceLabel"))
    slot = _SLOT.match(label or "")
    cache = as_dict(doc.get("CacheSummary"))
    size = integer(cache.get("TotalCacheSizeMiB"))
    state = word(as_dict(cache.get("Status")).get("State"))
    return Controller(
        slot=slot.group(1).lower() if slot else None,
        location=None if slot else label,
        model=text(doc.get("Model")) or text(doc.get("Name")) or "storage controller",
        serial=text(doc.get("SerialNumber")),
        firmware=text(doc.get("FirmwareVersion")),
        status=word(as_dict(doc.get("Status")).get("Health")),
        cache=Cache(
            present=None if state is None else state != "absent",
            status=word(as_dict(cache.get("Status")).get("Health")),
            size_bytes=mib_bytes(size),
        ),
        logical_drives=volumes,
        physical_drives=drives,
        notices=[*notices, LACKS],
    )


def _drive(path: str, doc: dict) -> PhysicalDrive:
    label = as_dict(as_dict(doc.get("PhysicalLocation")).get("PartLocation")).get(
        "ServiceLabel")
    capacity = integer(doc.get("CapacityBytes"))
    life = number(doc.get("PredictedMediaLifeLeftPercent"), 0, 100)
    return PhysicalDrive(
        drive_id=text(label) or text(doc.get("Id")) or path,
        interface=text(doc.get("Protocol")),
        size_bytes=capacity if capacity is not None and capacity >= 0 else None,
        status=word(as_dict(doc.get("Status")).get("Health")),
        status_text=text(as_dict(doc.get("Status")).get("Health")),
        model=text(doc.get("Model")),
        serial=text(doc.get("SerialNumber")),
        firmware=text(doc.get("Revision")),
        usage_remaining_percent=life,
    )


def _volume(path: str, doc: dict) -> LogicalDrive:
    capacity = integer(doc.get("CapacityBytes"))
    return LogicalDrive(
        drive_id=text(doc.get("Id")) or path,
        size_bytes=capacity if capacity is not None and capacity >= 0 else None,
        raid=_raid_type(text(doc.get("RAIDType"))),
        status=word(as_dict(doc.get("Status")).get("Health")),
        status_text=text(as_dict(doc.get("Status")).get("Health")),
    )


def _raid_type(raid_type: str | None) -> str | None:
    """DMTF's ``RAIDType`` in the CLI's words: ``RAID10`` -> ``RAID 1+0``; ``None`` (no
    RAID) as sent."""
    if raid_type is None or not raid_type.startswith("RAID"):
        return raid_type
    return raid_words(raid_type.removeprefix("RAID"))


def _links(items: object, documents: Documents, notices: list[str]) -> list[tuple[str, dict]]:
    """The documents an array of ``{"@odata.id": ...}`` links points to, as fetched."""
    return fetched(documents, _paths(items), notices)


def _paths(items: object) -> list[str]:
    """The paths of an array of ``{"@odata.id": ...}`` links."""
    paths = [as_dict(item).get("@odata.id") for item in items] if isinstance(items, list) else []
    return [p for p in paths if isinstance(p, str)]


def _collection(link: object, documents: Documents, name: str,
                notices: list[str]) -> list[tuple[str, dict]]:
    where = as_dict(link).get("@odata.id")
    collection = documents.get(where) if isinstance(where, str) else None
    if collection is None or not isinstance(collection.get("Members"), list):
        notices.append(f"redfish: the iLO's {name} collection was not read: no {name} known")
        return []
    return fetched(documents, members(collection, str(where)), notices)


def drive_links(storage: dict) -> list[str]:
    """Every path under a Storage resource that its snapshot reads, for the crawler."""
    return _paths(storage.get("Drives"))


def collection_links(storage: dict) -> list[str]:
    """The collections (``Controllers``, ``Volumes``) a Storage resource links to."""
    found = [as_dict(storage.get(name)).get("@odata.id") for name in ("Controllers", "Volumes")]
    return [p for p in found if isinstance(p, str)]

