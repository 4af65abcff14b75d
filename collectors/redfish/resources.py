"""Redfish JSON -> models. Pure: no I/O.

Where the batteries are (field names from HPE's iLO Redfish reference and real answers):

- iLO 5 (Gen10): ``/redfish/v1/Chassis/1`` -> ``Oem.Hpe.SmartStorageBattery[]`` with
  ``Index``, ``Model``, ``ProductName``, ``SerialNumber``, ``SparePartNumber``,
  ``FirmwareVersion``, ``ChargeLevelPercent``, ``BatteryWearLevelPercent`` (newer firmware),
  ``MaximumCapWatts``, ``RemainingChargeTimeSeconds``, ``ErrorCode``, ``FailurePredicted`` and
  ``Status{Health, State}``. ``Oem.Hp`` is read the same way.
- iLO 4 (Gen9): ``/redfish/v1/Systems/1`` -> ``Oem.Hp.Battery[]`` with ``Index``, ``Model``,
  ``ProductName``, ``SerialNumber``, ``Spare``, ``FirmwareVersion``, ``MaxCapWatts``,
  ``Condition`` (``Ok``, ...) and ``Present`` (``Yes``/``No``): no charge at all.
- Both: ``/redfish/v1/Systems/1/SmartStorage/ArrayControllers/{id}`` with ``Location``
  (``Slot 0``), ``SerialNumber`` (padded with spaces), ``Model``,
  ``BackupPowerSourceStatus`` (``Present``, ``NotPresent``, ``PresentAndCharged``,
  ``PresentAndCharging``), ``CacheModuleStatus{Health}``,
  ``CacheMemorySizeMiB`` and ``Status{Health, State}``.

A value of the wrong type or out of range is ``None``, never a guess; words are normalised
like the CLI's status words (``NotPresent`` -> ``not_present``, ``OK`` -> ``ok``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from smartarray_agent.collectors.redfish.errors import RedfishError

_SLOT = re.compile(r"^\s*slot\s+(\w+)\s*$", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Battery(_Model):
    index: int | None = None
    model: str | None = None
    product_name: str | None = None
    serial: str | None = None
    spare_part: str | None = None
    firmware: str | None = None
    charge_percent: float | None = None  # ChargeLevelPercent (iLO 5 only)
    # ChargeLevelPercent as sent, when the iLO sent one that is not a number 0-100 (null too)
    charge_unreadable: str | None = None
    wear_percent: float | None = None  # BatteryWearLevelPercent: 100 = worn out
    capacity_watts: float | None = None  # MaximumCapWatts / MaxCapWatts
    remaining_charge_time_s: float | None = None  # RemainingChargeTimeSeconds
    health: str | None = None  # ok, warning, critical (iLO 4: Condition)
    state: str | None = None  # enabled, absent, ... (iLO 4: from Present)
    error_code: str | None = None
    failure_predicted: bool | None = None


class ArrayController(_Model):
    resource: str  # the @odata.id it was read from
    location: str | None = None  # "Slot 0" as printed
    slot: str | None = None  # "0"; None for "Slot UNKNOWN" or another format
    serial: str | None = None
    model: str | None = None
    backup_power: str | None = None  # present, not_present, present_and_charg{ed,ing}
    cache_module_health: str | None = None
    cache_size_mib: int | None = None
    health: str | None = None


class Reading(_Model):
    """One Redfish collection. ``taken_at`` is Unix time."""

    taken_at: float
    batteries: list[Battery] = Field(default_factory=list)
    controllers: list[ArrayController] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)


def word(value: Any) -> str | None:
    """``'NotPresent'`` -> ``'not_present'``, ``'OK'`` -> ``'ok'``; anything else -> None."""
    if not isinstance(value, str):
        return None
    text = _NON_WORD.sub("_", _CAMEL.sub("_", value.strip()).lower()).strip("_")
    return text or None


def chassis_batteries(chassis: dict) -> list[Battery] | None:
    """iLO 5's batteries in a Chassis resource; None when it has no battery list."""
    entries = _oem(chassis).get("SmartStorageBattery")
    if not isinstance(entries, list):
        return None
    return [_ilo5_battery(entry) for entry in entries if isinstance(entry, dict)]


def system_batteries(system: dict) -> list[Battery] | None:
    """iLO 4's batteries in a ComputerSystem resource; None when it has no battery list."""
    entries = _oem(system).get("Battery")
    if not isinstance(entries, list):
        return None
    return [_ilo4_battery(entry) for entry in entries if isinstance(entry, dict)]


def fetched(documents: Mapping[str, dict], paths: Iterable[str],
            notices: list[str]) -> list[tuple[str, dict]]:
    """The documents at ``paths`` as the crawl fetched them; each path it did not read is
    noted."""
    found = []
    for path in paths:
        if path in documents:
            found.append((path, documents[path]))
        else:
            notices.append(f"redfish: {path} was not read")
    return found


def members(collection: dict, where: str) -> list[str]:
    """The ``@odata.id`` of every member of a Redfish collection."""
    items = collection.get("Members")
    if not isinstance(items, list):
        raise RedfishError(f"{where}: not a Redfish collection (no Members list)")
    ids = [item.get("@odata.id") for item in items if isinstance(item, dict)]
    return [member for member in ids if isinstance(member, str) and member.startswith("/")]


def array_controller(resource: str, data: dict) -> ArrayController:
    location = text(data.get("Location"))
    match = _SLOT.match(location or "")
    slot = match.group(1).lower() if match else None
    return ArrayController(
        resource=resource,
        location=location,
        slot=None if slot == "unknown" else slot,
        serial=text(data.get("SerialNumber")),
        model=text(data.get("Model")),
        backup_power=word(data.get("BackupPowerSourceStatus")),
        cache_module_health=word(as_dict(data.get("CacheModuleStatus")).get("Health")),
        cache_size_mib=integer(data.get("CacheMemorySizeMiB")),
        health=word(as_dict(data.get("Status")).get("Health")),
    )


def _ilo5_battery(entry: dict) -> Battery:
    status = as_dict(entry.get("Status"))
    return Battery(
        **_identity(entry),
        spare_part=text(entry.get("SparePartNumber")),
        charge_percent=number(entry.get("ChargeLevelPercent"), 0, 100),
        charge_unreadable=_unreadable(entry, "ChargeLevelPercent", 0, 100),
        wear_percent=number(entry.get("BatteryWearLevelPercent"), 0, 100),
        capacity_watts=number(entry.get("MaximumCapWatts"), 0, math.inf),
        remaining_charge_time_s=number(entry.get("RemainingChargeTimeSeconds"), 0, math.inf),
        health=word(status.get("Health")),
        state=word(status.get("State")),
        error_code=text(entry.get("ErrorCode")),
        failure_predicted=boolean(entry.get("FailurePredicted")),
    )


def _ilo4_battery(entry: dict) -> Battery:
    present = word(entry.get("Present"))
    return Battery(
        **_identity(entry),
        spare_part=text(entry.get("Spare")),
        capacity_watts=number(entry.get("MaxCapWatts"), 0, math.inf),
        health=word(entry.get("Condition")),
        state={"yes": "enabled", "no": "absent"}.get(present or ""),
    )


def _identity(entry: dict) -> dict[str, Any]:
    return {
        "index": integer(entry.get("Index")),
        "model": text(entry.get("Model")),
        "product_name": text(entry.get("ProductName")),
        "serial": text(entry.get("SerialNumber")),
        "firmware": text(entry.get("FirmwareVersion")),
    }


def _oem(resource: dict) -> dict:
    oem = as_dict(resource.get("Oem"))
    return as_dict(oem.get("Hpe")) or as_dict(oem.get("Hp"))


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def number(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        value = float(value)
    except OverflowError:  # a whole number past a float's range (400 digits): no value
        return None
    return value if math.isfinite(value) and low <= value <= high else None


def _unreadable(entry: dict, key: str, low: float, high: float) -> str | None:
    """``entry[key]`` as JSON text when it is there but not a number from low to high."""
    if key not in entry or number(entry[key], low, high) is not None:
        return None
    return json.dumps(entry[key])


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def boolean(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


# A RAID level -> the CLI's words for it ("RAID " and its Fault Tolerance), so a probe's
# raid label is the local agent's; a level not listed is "RAID " and the level as sent
# (1ADM, 10ADM, 1E: no CLI text of theirs was at hand)
_RAID_LEVELS = {"10": "1+0"}


def raid_words(level: str | None) -> str | None:
    """``10`` -> ``RAID 1+0``, ``5`` -> ``RAID 5``: the CLI's words."""
    return None if level is None else f"RAID {_RAID_LEVELS.get(level, level)}"


def mib_bytes(mib: int | None) -> int | None:
    """Bytes of a size the iLO gives in MiB; None for a missing or negative one."""
    return mib * 2**20 if mib is not None and mib >= 0 else None
