"""The scenario as plain data: what the simulator renders, modifies and keeps in its state.

Instances are built only from data :mod:`smartarray_agent.collectors.simulator.scenario`
validated (its pydantic models' dump, kept in the state directory), so a simulator process
answering from a state directory never imports pydantic. Field names and meanings are those
of the models in ``scenario.py``.
"""

from __future__ import annotations

from smartarray_agent.record import Record

TYPE_CHECKING = False  # mypy takes it as True; importing typing costs a start about 6 ms
if TYPE_CHECKING:
    from typing import Any


class ScenarioError(ValueError):
    """A scenario file that cannot be read or does not validate."""


class DriveWriteCachePolicy(Record):
    configured: str
    unconfigured: str
    hba: str | None


class Cache(Record):
    present: bool
    status: str | None
    status_details: str | None
    disable_reason: str | None
    size_bytes: int | None
    memory_available_bytes: int | None
    battery_backed_size_bytes: int | None
    read_percent: int | None
    write_percent: int | None
    no_battery_write_cache: bool
    drive_write_cache: bool | None
    drive_write_cache_policy: DriveWriteCachePolicy | None
    wait_for_cache_room: bool


class BackupPower(Record):
    source: str | None
    count: int | None
    status: str | None
    failed_locations: list[str]


class Sensor(Record):
    sensor_id: int
    location: str
    current_c: int
    max_since_power_on_c: int


class Temperatures(Record):
    controller_c: int | None
    cache_module_c: int | None
    capacitor_c: int | None
    sensors: list[Sensor]


class Array(Record):
    name: str
    status: str


class LogicalDrive(Record):
    id: str
    array: str
    size: str
    raid: str
    status: str
    caching: bool
    disk_name: str | None


class PhysicalDrive(Record):
    id: str
    array: str | None
    interface: str
    ssd: bool
    size: str
    status: str
    model: str | None
    serial: str | None
    firmware: str


class Controller(Record):
    slot: str
    model: str
    serial: str
    firmware: str
    status: str
    mode: str | None
    embedded: bool
    cache: Cache
    backup_power: BackupPower
    temperatures: Temperatures
    arrays: list[Array]
    logical_drives: list[LogicalDrive]
    physical_drives: list[PhysicalDrive]


class TimelineStep(Record):
    slot: str
    after_s: float
    battery_status: str | None
    cache_status: str | None
    cache_status_details: str | None


class Faults(Record):
    startup_delay_s: float
    nonsa_scan_delay_s: float
    command_delay_s: float
    hang: list[str]
    crash: list[str]
    crash_exit_code: int
    garbage: list[str]
    flood: list[str]
    flood_bytes: int
    lock_conflict: bool
    single_instance: bool
    no_controllers: bool
    ignore_modify: bool
    prompt: list[str]
    battery_timeline: list[TimelineStep]


class Scenario(Record):
    description: str
    generation: str
    cli_version: str | None
    controllers: list[Controller]
    faults: Faults

    def controller(self, slot: str) -> Controller | None:
        return next((c for c in self.controllers if c.slot == slot), None)


# The fields that hold other plain classes (one, or a list of them).
_NESTED: dict[type, dict[str, type]] = {
    Scenario: {"controllers": Controller, "faults": Faults},
    Controller: {
        "cache": Cache,
        "backup_power": BackupPower,
        "temperatures": Temperatures,
        "arrays": Array,
        "logical_drives": LogicalDrive,
        "physical_drives": PhysicalDrive,
    },
    Cache: {"drive_write_cache_policy": DriveWriteCachePolicy},
    Temperatures: {"sensors": Sensor},
    Faults: {"battery_timeline": TimelineStep},
}


CLASSES: tuple[type[Record], ...] = (
    Scenario, Controller, Cache, DriveWriteCachePolicy, BackupPower, Temperatures, Sensor,
    Array, LogicalDrive, PhysicalDrive, Faults, TimelineStep,
)  # fmt: skip
# The fields of every class: a state saved with other fields is validated again (state.py).
FORM = " ".join(f"{cls.__name__}({','.join(cls.fields)})" for cls in CLASSES)


def _build(cls: type, data: dict[str, Any]) -> Any:
    """``cls`` from ``data``; a missing or an unknown key raises TypeError."""
    nested = _NESTED.get(cls, {})
    values = {}
    for key, value in data.items():
        kind = nested.get(key)
        if kind is not None and isinstance(value, list):
            value = [_build(kind, item) for item in value]
        elif kind is not None and value is not None:
            value = _build(kind, value)
        values[key] = value
    return cls(**values)


def from_data(data: dict[str, Any]) -> Scenario:
    """A scenario from the dump of a validated one (``scenario.Scenario.model_dump``)."""
    built: Scenario = _build(Scenario, data)
    return built


def faults_from_data(data: dict[str, Any]) -> Faults:
    """Faults from the dump of validated ones (``scenario.Faults.model_dump``)."""
    built: Faults = _build(Faults, data)
    return built
