"""Redfish JSON -> models, and the links between the documents. Pure: no I/O.

Each model reads the iLO's JSON itself (:class:`Payload`: a field names its property by an
alias or path; docs/redfish.md, "What it reads", says where each is). A value of the wrong
type or out of range is ``None``, never a guess (the lenient types, :data:`Text`,
:data:`Percent`, ...); words are normalised like the CLI's status words (:func:`word`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.common.model import Cache

_SLOT = re.compile(r"^\s*slot\s+(?!unknown\s*$)(\w+)\s*$", re.I)  # "Slot UNKNOWN" is none
# where a word of a CamelCase value starts: a capital after a small letter or digit, or the
# last capital of a run before a small letter (IOBypass, SSDSmartPath: IO Bypass, SSD Smart)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")
FIRMWARE = AliasPath("FirmwareVersion", "Current", "VersionString")  # HPE's firmware version
Documents = Mapping[str, dict]  # fetched Redfish resources by path, as their links name them


def _or_none(value: Any, read: ValidatorFunctionWrapHandler) -> Any:
    try:
        return read(value)
    except ValidationError:
        return None


def word(value: Any) -> str | None:
    """``'NotPresent'`` -> ``'not_present'``, ``'IOBypass'`` -> ``'io_bypass'``, ``'OK'`` ->
    ``'ok'``; anything but a string -> None."""
    if not isinstance(value, str):
        return None
    return _NON_WORD.sub("_", _CAMEL.sub("_", value.strip()).lower()).strip("_") or None


# The types of a property read from the iLO: strict (no "50" for 50, no true for 1), and a
# value of the wrong type or out of range is None, never a guess, and never a validation
# error (one odd property does not lose the rest)
_LENIENT = WrapValidator(_or_none)
_Real = Annotated[float, Field(strict=True, allow_inf_nan=False)]  # an int is a number too
_Whole = Annotated[int, Field(strict=True)]
Text = Annotated[Annotated[str, StringConstraints(  # padding trimmed, "" is None
    strict=True, strip_whitespace=True, min_length=1)] | None, _LENIENT]
Word = Annotated[str | None, BeforeValidator(word)]
Integer = Annotated[_Whole | None, _LENIENT]
Flag = Annotated[Annotated[bool, Field(strict=True)] | None, _LENIENT]
Percent = Annotated[Annotated[_Real, Field(ge=0, le=100)] | None, _LENIENT]
Amount = Annotated[Annotated[_Real, Field(ge=0)] | None, _LENIENT]
Celsius = Annotated[Annotated[_Real, Field(ge=-273)] | None, _LENIENT]
Share = Annotated[Annotated[_Whole, Field(ge=0, le=100)] | None, _LENIENT]  # ReadCachePercent
# a count or size that cannot be negative (CapacityMiB, PowerOnHours)
Count = Annotated[Annotated[_Whole, Field(ge=0)] | None, _LENIENT]
# a list of words as sent, padding trimmed, anything but a non-empty string left out
Texts = Annotated[list[str], BeforeValidator(lambda value: [t.strip() for t in (
    value if isinstance(value, list) else []) if isinstance(t, str) and t.strip()])]
_PERCENT = TypeAdapter(Percent)
# a percentage as sent (JSON) where it is not a number 0-100 (null too); None where it is
Unreadable = Annotated[str | None, BeforeValidator(
    lambda value: None if _PERCENT.validate_python(value) is not None else json.dumps(value))]
HEALTH = AliasPath("Status", "Health")
STATE = AliasPath("Status", "State")


class Payload(BaseModel):
    """A model read from an iLO's JSON by its property names (aliases), ignoring the
    properties it does not name; made by field name too (tests, merged readings). Every
    field has a lenient type, so no answer, however odd, fails validation."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True)


class Battery(Payload):
    """An HPE Smart Storage Battery: iLO 5's ``Oem.Hpe.SmartStorageBattery[]`` entry, or
    iLO 4's ``Oem.Hp.Battery[]`` entry (its own names as the second choice)."""

    index: Integer = Field(None, alias="Index")
    model: Text = Field(None, alias="Model")
    product_name: Text = Field(None, alias="ProductName")
    serial: Text = Field(None, alias="SerialNumber")
    spare_part: Text = Field(None, validation_alias=AliasChoices("SparePartNumber", "Spare"))
    firmware: Text = Field(None, alias="FirmwareVersion")
    charge_percent: Percent = Field(None, alias="ChargeLevelPercent")  # iLO 5 only
    charge_unreadable: Unreadable = Field(None, validation_alias="ChargeLevelPercent")
    # BatteryWearLevelPercent: 100 = worn out
    wear_percent: Percent = Field(None, alias="BatteryWearLevelPercent")
    capacity_watts: Amount = Field(
        None, validation_alias=AliasChoices("MaximumCapWatts", "MaxCapWatts"))
    remaining_charge_time_s: Amount = Field(None, alias="RemainingChargeTimeSeconds")
    # ok, warning, critical (iLO 4: Condition), and as sent
    health: Word = Field(None, validation_alias=AliasChoices(HEALTH, "Condition"))
    health_text: Text = Field(None, validation_alias=AliasChoices(HEALTH, "Condition"))
    state: Word = Field(None, validation_alias=STATE)  # enabled, absent, ...
    error_code: Text = Field(None, alias="ErrorCode")
    failure_predicted: Flag = Field(None, alias="FailurePredicted")

    @model_validator(mode="before")
    @classmethod
    def _present(cls, data: Any) -> Any:
        """iLO 4's ``Present`` (``Yes``, ``No``) as the state (``enabled``, ``absent``)."""
        if not isinstance(data, dict) or "Present" not in data or "Status" in data:
            return data
        return {**data, "state": {"yes": "enabled", "no": "absent"}.get(
            word(data["Present"]) or "")}


class ArrayController(Payload):
    """An ``HpeSmartStorageArrayController`` (iLO 4: ``HpSmartStorageArrayController``)."""

    resource: str  # the path it was read from
    location: Text = Field(None, alias="Location")  # "Slot 0" as printed
    slot: Text = None  # "0"; None for "Slot UNKNOWN" or another format
    serial: Text = Field(None, alias="SerialNumber")
    model: Text = Field(None, alias="Model")
    # present, not_present, present_and_charg{ed,ing}
    backup_power: Word = Field(None, alias="BackupPowerSourceStatus")
    cache_module_health: Word = Field(None, validation_alias=AliasPath("CacheModuleStatus",
                                                                       "Health"))
    cache_size_mib: Integer = Field(None, alias="CacheMemorySizeMiB")
    health: Word = Field(None, validation_alias=HEALTH)

    @model_validator(mode="before")
    @classmethod
    def _slot(cls, data: Any) -> Any:
        """The slot of ``Location`` (``Slot 0`` -> ``0``)."""
        if not isinstance(data, dict) or "Location" not in data:
            return data
        found = _SLOT.match(data["Location"]) if isinstance(data["Location"], str) else None
        return {**data, "slot": found.group(1).lower() if found else None}


class Reading(BaseModel):
    """One read of the battery and the array controllers. ``taken_at``: when, on the
    monotonic clock (CLOCK_MONOTONIC: the ages of every process of a boot compare)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    taken_at: float
    batteries: list[Battery] = Field(default_factory=list)
    controllers: list[ArrayController] = Field(default_factory=list)


def array_controller(resource: str, data: dict) -> ArrayController:
    return ArrayController.model_validate({**data, "resource": resource})


def chassis_batteries(chassis: dict, key: str = "SmartStorageBattery") -> list[Battery] | None:
    """iLO 5's batteries in a Chassis resource (the ``key`` list of its ``Oem.Hpe``, else
    ``Oem.Hp``); None when it has no battery list."""
    oem = as_dict(chassis.get("Oem"))
    entries = (as_dict(oem.get("Hpe")) or as_dict(oem.get("Hp"))).get(key)
    if not isinstance(entries, list):
        return None
    return [Battery.model_validate(entry) for entry in entries if isinstance(entry, dict)]


def system_batteries(system: dict) -> list[Battery] | None:
    """iLO 4's batteries in a ComputerSystem resource; None when it has no battery list."""
    return chassis_batteries(system, "Battery")


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def odata_id(value: object) -> str | None:
    """The path a ``{"@odata.id": ...}`` link names; None for anything else."""
    path = as_dict(value).get("@odata.id")
    return path if isinstance(path, str) else None


def link(document: dict, name: str) -> str | None:
    """The path ``Links.<name>.@odata.id`` names, or, in iLO 4's HAL form,
    ``links.<name>.href``; None when neither is there."""
    for links, key in (("Links", "@odata.id"), ("links", "href")):
        path = as_dict(as_dict(document.get(links)).get(name)).get(key)
        if isinstance(path, str) and path.startswith("/"):
            return path
    return None


def members(collection: dict, where: str) -> list[str]:
    """The paths of every member of a Redfish collection: ``Members[].@odata.id``, or, in
    iLO 4's HAL form, ``links.Member[].href``."""
    items, key = collection.get("Members"), "@odata.id"
    if not isinstance(items, list):
        items, key = as_dict(collection.get("links")).get("Member"), "href"
    if not isinstance(items, list):
        raise RedfishError(f"{where}: not a Redfish collection (no Members list)")
    paths = [as_dict(item).get(key) for item in items]
    return [path for path in paths if isinstance(path, str) and path.startswith("/")]


def fetched(documents: Documents, paths: list[str],
            notices: list[str]) -> list[tuple[str, dict]]:
    """The documents at ``paths`` as the crawl fetched them; each path it did not read is
    noted."""
    notices += [f"redfish: {path} was not read" for path in paths if path not in documents]
    return [(path, documents[path]) for path in paths if path in documents]


def linked(documents: Documents, where: str | None, name: str,
           notices: list[str]) -> list[tuple[str, dict]]:
    """The members of the ``name`` collection at ``where``, as the crawl fetched them; none
    where there is no link or the collection was not read, and a notice says which."""
    collection = documents.get(where) if where else None
    try:
        return fetched(documents, members(collection or {}, str(where)), notices)
    except RedfishError:
        notices.append(f"redfish: {where} was not read: no {name} known" if where else
                       f"redfish: the iLO gives no link to its {name}: no {name} known")
        return []


def cache(state: str | None, health: str | None, size_mib: int | None, **more: Any) -> Cache:
    """A controller's cache from its module's ``Status`` (normalised) and size, with ``more``
    of its fields. Present unless the ``State`` is ``absent``; without a state, a size above
    0 is a cache. Its status is the health, unless that is OK or not given while the state is
    neither Enabled nor Absent: then the state (``disabled``, ``starting``). A disabled cache
    is no ok cache, whatever its health."""
    sized = True if size_mib is not None and size_mib > 0 else None
    by_state = health in (None, "ok") and state not in (None, "enabled", "absent")
    return Cache(present=sized if state is None else state != "absent",
                 status=state if by_state else health, size_bytes=mib_bytes(size_mib), **more)


def raid_words(level: str | None) -> str | None:
    """``10`` -> ``RAID 1+0``, ``5`` -> ``RAID 5``: the CLI's words ("RAID " and its Fault
    Tolerance), so a probe's raid label is the local agent's; any other level as sent (1ADM,
    10ADM, 1E: no CLI text of theirs was at hand)."""
    return None if level is None else f"RAID {'1+0' if level == '10' else level}"


def mib_bytes(mib: int | None) -> int | None:
    """Bytes of a size the iLO gives in MiB; None for a missing or negative one."""
    return mib * 2**20 if mib is not None and mib >= 0 else None
