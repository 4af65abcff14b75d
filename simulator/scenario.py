"""Scenario files (TOML): the hardware a simulated CLI sees, and its faults. Status
values are the CLI's texts (``"Failed (Replace Batteries)"``); cache sizes are bytes or a
text with a binary unit (``"512 MiB"``); unknown keys are errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from smartarray_agent.common.configfile import ConfigError, read_document, validate

Generation = Literal["hpacucli9", "hpssacli2", "ssacli3", "ssacli-gen10"]
GENERATIONS: tuple[str, ...] = get_args(Generation)

_UNITS = {"b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b)\s*$", re.IGNORECASE)
_DRIVE_ID = re.compile(r"^[0-9A-Za-z]+:\d+:\d+$")


class ScenarioError(ValueError):
    """A scenario file that cannot be read or does not validate."""


def _bytes(value: object) -> object:  # "512 MiB" -> 536870912; ints pass through
    if not isinstance(value, str):
        return value
    match = _SIZE.match(value)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise ValueError(f"size {value!r} is not bytes or a number with B, KiB, MiB, GiB, TiB")
    return round(float(match.group(1)) * unit)


ByteSize = Annotated[int, BeforeValidator(_bytes), Field(ge=0)]
Percent = Annotated[int, Field(ge=0, le=100)]
PolicyWord = Literal["Default", "Enable", "Disable"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DriveWriteCachePolicy(_Strict):  # Gen10's; hba is printed only when set
    configured: PolicyWord = "Default"
    unconfigured: PolicyWord = "Default"
    hba: PolicyWord | None = None


class Cache(_Strict):
    present: bool = True
    status: str | None = "OK"
    status_details: str | None = None
    disable_reason: str | None = None
    size_bytes: ByteSize | None = None
    memory_available_bytes: ByteSize | None = None
    battery_backed_size_bytes: ByteSize | None = None
    read_percent: Percent | None = 25
    write_percent: Percent | None = 75
    no_battery_write_cache: bool = False
    drive_write_cache: bool | None = False
    drive_write_cache_policy: DriveWriteCachePolicy | None = None
    wait_for_cache_room: bool = False

    @model_validator(mode="after")
    def _ratio_adds_up(self) -> Cache:
        read, write = self.read_percent, self.write_percent
        if (read is None) != (write is None):
            raise ValueError("read_percent and write_percent are set together or not at all")
        if read is not None and write is not None and read + write != 100:
            raise ValueError(f"read_percent + write_percent must be 100, not {read + write}")
        return self


class BackupPower(_Strict):
    source: Literal["Batteries", "Capacitors"] | None = None
    count: int | None = Field(default=None, ge=0)
    status: str | None = None
    failed_locations: list[str] = Field(default_factory=list)
    # the Smart Storage Battery's charge as the simulated iLO reports it (the CLI prints
    # none; a capacitor pack reports none); None: 100 while the status is OK, else 0
    charge_percent: Percent | None = None


class Sensor(_Strict):
    sensor_id: int
    location: str
    current_c: int
    max_since_power_on_c: int


class Temperatures(_Strict):
    controller_c: int | None = None
    cache_module_c: int | None = None
    capacitor_c: int | None = None
    sensors: list[Sensor] = Field(default_factory=list)


class Array(_Strict):
    name: str = Field(pattern=r"^[A-Z]{1,2}$")
    status: str = "OK"


class LogicalDrive(_Strict):
    id: str = Field(pattern=r"^\d+$")
    array: str
    size: str = "279.4 GB"
    raid: str = "1"
    status: str = "OK"
    caching: bool = True
    disk_name: str | None = None


class PhysicalDrive(_Strict):
    id: str
    array: str | None = None  # None: unassigned (RAID mode) or an HBA drive (HBA mode)
    interface: Literal["SAS", "SATA"] = "SAS"
    ssd: bool = False
    size: str = "300 GB"
    status: str = "OK"
    model: str | None = None
    serial: str | None = None
    firmware: str = "HPD4"

    @model_validator(mode="after")
    def _id_is_port_box_bay(self) -> PhysicalDrive:
        if not _DRIVE_ID.match(self.id):
            raise ValueError(f"physical drive id {self.id!r} is not port:box:bay (e.g. 1I:1:1)")
        return self


class Controller(_Strict):
    slot: str = Field(pattern=r"^[0-9A-Za-z]+$")
    model: str
    serial: str
    firmware: str
    status: str = "OK"
    mode: Literal["raid", "hba", "mixed"] | None = "raid"
    embedded: bool = False
    cache: Cache = Field(default_factory=Cache)
    backup_power: BackupPower = Field(default_factory=BackupPower)
    temperatures: Temperatures = Field(default_factory=Temperatures)
    arrays: list[Array] = Field(default_factory=list)
    logical_drives: list[LogicalDrive] = Field(default_factory=list)
    physical_drives: list[PhysicalDrive] = Field(default_factory=list)

    @model_validator(mode="after")
    def _drives_reference_arrays(self) -> Controller:
        names = {a.name for a in self.arrays}
        every: list[LogicalDrive | PhysicalDrive] = [*self.logical_drives,
                                                     *self.physical_drives]
        for drive in every:
            if drive.array is not None and drive.array not in names:
                raise ValueError(f"drive {drive.id} names array {drive.array!r}, not declared")
        for kind, drives in (("logical", self.logical_drives), ("physical", self.physical_drives)):
            ids = [d.id for d in drives]
            if len(ids) != len(set(ids)):
                raise ValueError(f"duplicate {kind} drive ids in slot {self.slot}")
        return self


class TimelineStep(_Strict):  # from after_s seconds after the state was made
    slot: str
    after_s: float = Field(ge=0)
    battery_status: str | None = None
    cache_status: str | None = None
    cache_status_details: str | None = None  # "" clears the line


class Faults(_Strict):
    """Injected misbehaviour. Command patterns match the canonical command text
    (``ctrl all show config detail``) as a substring; ``"*"`` matches every command."""

    startup_delay_s: float = Field(default=0, ge=0)
    nonsa_scan_delay_s: float = Field(default=0, ge=0)  # skipped with INFOMGR_BYPASS_NONSA=1
    command_delay_s: float = Field(default=0, ge=0)
    hang: list[str] = Field(default_factory=list)
    crash: list[str] = Field(default_factory=list)
    crash_exit_code: int = Field(default=134, ge=1, le=255)
    garbage: list[str] = Field(default_factory=list)
    flood: list[str] = Field(default_factory=list)  # print flood_bytes of filler lines first
    flood_bytes: int = Field(default=64 * 2**20, ge=1, le=2**40)
    lock_conflict: bool = False
    single_instance: bool = True  # a second concurrent instance gets the lock-conflict error
    no_controllers: bool = False
    ignore_modify: bool = False
    prompt: list[str] = Field(default_factory=list)  # modifies that ask (y/n) unless forced
    prompt_garbled: list[str] = Field(default_factory=list)  # the console's next prompt garbled
    console_only: bool = False  # hang, crash, garbage, prompt, prompt_garbled: console only
    console_refused: bool = False  # console mode says Error: and exits, as without a console
    battery_timeline: list[TimelineStep] = Field(default_factory=list)


class Scenario(_Strict):
    description: str = Field(min_length=1)
    generation: Generation
    cli_version: str | None = None
    controllers: list[Controller] = Field(default_factory=list)
    faults: Faults = Field(default_factory=Faults)

    @model_validator(mode="after")
    def _fits_generation(self) -> Scenario:
        slots = [c.slot for c in self.controllers]
        if len(slots) != len(set(slots)):
            raise ValueError("duplicate controller slots")
        gen10 = self.generation == "ssacli-gen10"
        for ctrl in self.controllers:
            if self.generation == "hpacucli9" and ctrl.mode in ("hba", "mixed"):
                raise ValueError(f"slot {ctrl.slot}: hpacucli9 has no {ctrl.mode} mode")
            if not gen10 and ctrl.mode == "mixed":
                raise ValueError(f"slot {ctrl.slot}: mixed mode is Gen10 only")
            if gen10 and ctrl.cache.drive_write_cache_policy is None:
                ctrl.cache.drive_write_cache_policy = DriveWriteCachePolicy()
            if gen10:
                ctrl.cache.drive_write_cache = None
            elif ctrl.cache.drive_write_cache_policy is not None:
                raise ValueError(f"slot {ctrl.slot}: drive_write_cache_policy is Gen10 only")
        for step in self.faults.battery_timeline:
            if step.slot not in slots:
                raise ValueError(f"battery_timeline names slot {step.slot!r}, not a controller")
        return self

    def controller(self, slot: str) -> Controller | None:
        return next((c for c in self.controllers if c.slot == slot), None)


def load_scenario(path: Path) -> Scenario:
    """The scenario in the TOML file ``path``, read as the agent reads its configuration
    (common/configfile.py: as root, only a file root alone could have written); ScenarioError
    lists each problem as ``file:line: key: problem``."""
    try:
        return validate(read_document(path), Scenario)
    except ConfigError as error:
        raise ScenarioError(str(error)) from None


def faults_with(faults: Faults, override: dict[str, object]) -> Faults:
    """``faults`` with ``override``'s keys, validated; raises pydantic's ValidationError."""
    return Faults.model_validate({**faults.model_dump(mode="json"), **override})

