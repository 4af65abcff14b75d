"""The normalised model every consumer reads: the ``status --json`` contract, its rules and
its shape in docs/status.md."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

RawPairs = list[tuple[str, str]]
INT64_MAX = 2**63 - 1  # the widest size or count a Redfish or Linux interface gives


def _unknown_outside(low: int, high: int) -> BeforeValidator:

    def within(value: object) -> object:
        outside = (isinstance(value, int) and not isinstance(value, bool)
                   and not low <= value <= high)
        return None if outside else value

    return BeforeValidator(within)


Bytes = Annotated[Annotated[int, Field(ge=0, le=INT64_MAX)] | None,
                  _unknown_outside(0, INT64_MAX)]  # a size
Count = Bytes  # units, hours, days
WholePercent = Annotated[Annotated[int, Field(ge=0, le=100)] | None, _unknown_outside(0, 100)]

_NON_WORD = re.compile(r"[^a-z0-9]+")


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


def normalise_status(text: str | None) -> str | None:
    """``'Failed (Replace Batteries)'`` -> ``'failed'``; empty text -> None."""
    word = _NON_WORD.sub("_", (text or "").partition("(")[0].lower()).strip("_")
    return word or None


class DriveWriteCachePolicy(_Block):
    """Gen10's drive write cache policy per drive usage: ``default``, ``enable``, ``disable``."""

    configured: str | None = None
    unconfigured: str | None = None
    hba: str | None = None


class Cache(_Block):
    """The cache module: state, size, ratio and the switches that decide if it caches writes."""

    present: bool | None = None
    status: str | None = None
    status_details: str | None = None
    disable_reason: str | None = None
    size_bytes: Bytes = None
    memory_available_bytes: Bytes = None
    battery_backed_size_bytes: Bytes = None
    read_percent: WholePercent = None
    write_percent: WholePercent = None
    no_battery_write_cache: bool | None = None
    drive_write_cache: bool | None = None
    drive_write_cache_policy: DriveWriteCachePolicy | None = None
    wait_for_cache_room: bool | None = None


class BackupPower(_Block):
    """What keeps the write cache safe through a power cut: batteries or capacitors."""

    source: str | None = None  # "batteries" | "capacitors"
    count: Count = None
    status: str | None = None
    status_text: str | None = None  # the status line as printed, parenthesised tail kept
    charge_percent: float | None = None  # only from a source that reports it (Redfish)
    failed_locations: list[str] = Field(default_factory=list)


class TemperatureSensor(_Block):
    """One sensor of a controller's ``Sensor ID`` blocks (ssacli)."""

    sensor_id: str
    location: str | None = None
    current_c: float | None = None
    max_since_power_on_c: float | None = None


class Temperatures(_Block):
    """The controller's temperatures in degrees Celsius, as its block prints them."""

    controller_c: float | None = None
    cache_module_c: float | None = None
    capacitor_c: float | None = None
    sensors: list[TemperatureSensor] = Field(default_factory=list)


class LogicalDrive(_Block):
    """One logical drive (a RAID volume) of a controller."""

    drive_id: str  # "1", "2", ... as printed
    array: str | None = None
    size_bytes: Bytes = None
    size_text: str | None = None
    raid: str | None = None
    status: str | None = None  # the state word: "ok", "recovering", "ready_for_rebuild", ...
    status_text: str | None = None  # the status as printed, progress and tails kept
    progress_percent: float | None = None  # "Recovering, 55.73% complete" -> 55.73
    caching: bool | None = None  # "Caching" (hpssacli/ssacli) or "Array Accelerator" (hpacucli)
    disk_name: str | None = None
    raw: RawPairs = Field(default_factory=list)


class PhysicalDrive(_Block):
    """One physical drive of a controller, in an array, unassigned or passed through."""

    drive_id: str  # "1I:1:1"
    array: str | None = None  # "A", "unassigned", "hba"
    port: str | None = None
    box: str | None = None
    bay: str | None = None
    interface: str | None = None  # "SAS", "SATA SSD", "Solid State SATA", ...
    size_bytes: Bytes = None
    size_text: str | None = None
    status: str | None = None  # the state word: "ok", "failed", "erase_in_progress", ...
    status_text: str | None = None
    progress_percent: float | None = None  # "Erase Percent Complete: 66%" -> 66.0
    failure_reason: str | None = None  # "Last Failure Reason: Timeout"
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    temperature_c: float | None = None
    max_temperature_c: float | None = None  # "Maximum Temperature (C)"
    usage_remaining_percent: float | None = None  # SSD wear; negative past rated endurance
    power_on_hours: Count = None
    estimated_life_remaining_days: Count = None
    ssd_smart_trip_wearout: bool | None = None
    raw: RawPairs = Field(default_factory=list)


class Array(_Block):
    """One array: the physical drives a controller groups for its logical drives."""

    name: str  # "A", "B", ... or "unassigned"
    status: str | None = None
    interface: str | None = None
    raw: RawPairs = Field(default_factory=list)


class Component(_Block):
    """Anything else printed with a title line (drive cages, ports, enclosures), kept."""

    title: str
    raw: RawPairs = Field(default_factory=list)


class Controller(_Block):
    """One Smart Array controller, with everything its block of the output shows."""

    slot: str | None = None
    location: str | None = None  # an external array's place instead of a slot ("MY STORAGE")
    model: str
    embedded: bool | None = None
    serial: str | None = None
    firmware: str | None = None
    status: str | None = None
    mode: str | None = None  # "raid" | "hba" | "mixed"
    pci_address: str | None = None  # "0000:0b:00.0" (lower-case, as sysfs names it); not unique
    cache: Cache = Field(default_factory=Cache)
    backup_power: BackupPower = Field(default_factory=BackupPower)
    temperatures: Temperatures = Field(default_factory=Temperatures)
    arrays: list[Array] = Field(default_factory=list)
    logical_drives: list[LogicalDrive] = Field(default_factory=list)
    physical_drives: list[PhysicalDrive] = Field(default_factory=list)
    components: list[Component] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)  # warnings printed inside the block
    raw: RawPairs = Field(default_factory=list)
    unparsed_lines: list[str] = Field(default_factory=list)

    @property
    def name(self) -> str:
        """How messages name this controller: ``Smart Array P410i in slot 0``."""
        where = f"slot {self.slot}" if self.slot is not None else "no slot"
        serial = f", serial {self.serial}" if self.serial else ""
        return f"{self.model} in {where}{serial}"


class VendorError(_Block):
    """An ``Error: ...`` output of the vendor CLI. ``message`` is its first line."""

    message: str
    detail: list[str] = Field(default_factory=list)
    kind: str  # see collectors.ssacli.errors.classify_error


class IloBattery(_Block):
    """A Smart Storage Battery the iLO reports that Redfish ties to no controller (the
    iLO-only snapshot, docs/redfish.md): shown, and no controller's backup power."""

    index: int | None = None  # the iLO's Index
    model: str | None = None
    serial: str | None = None
    status: str | None = None  # as backup power's: "ok", "failed" (Critical), "warning", ...
    status_text: str | None = None
    charge_percent: float | None = None


class Snapshot(_Block):
    """One read of the vendor CLI: every controller, or the CLI's error."""

    controllers: list[Controller] = Field(default_factory=list)
    unassigned_batteries: list[IloBattery] = Field(default_factory=list)  # from the iLO alone
    error: VendorError | None = None
    cli_version: str | None = None
    notices: list[str] = Field(default_factory=list)
    unparsed_lines: list[str] = Field(default_factory=list)


def to_json(snapshot: Snapshot) -> str:
    """The status contract: the snapshot as indented JSON, non-ASCII text as it is."""
    return snapshot.model_dump_json(indent=2)


# What each drive state word means, for every consumer (docs/metrics.md, "Drive states"): a
# word not listed is unknown, a warning, never "ok".
LOGICAL_DRIVE_STATES: dict[str, str] = {
    "ok": "ok",
    **dict.fromkeys(("transforming", "expanding", "queued_for_expansion", "erasing"),
                    "progressing"),
    **dict.fromkeys(("recovering", "rebuilding", "ready_for_rebuild", "regenerating"),
                    "rebuilding"),
    **dict.fromkeys(("interim_recovery_mode", "needs_rebuild_permission",
                     "wrong_drive_replaced", "bad_drive_connection"), "degraded"),
    "failed": "failed",
}
PHYSICAL_DRIVE_STATES: dict[str, str] = {
    "ok": "ok",
    **dict.fromkeys(("rebuilding", "erase_in_progress", "erasing", "erase_complete"),
                    "progressing"),
    "predictive_failure": "degraded",
    "failed": "failed",
}


def drive_class(states: dict[str, str], word: str | None) -> str | None:
    """``'unknown'`` for a word ``states`` does not list, None when none was printed."""
    if word is None:
        return None
    return states.get(word, "unknown")
