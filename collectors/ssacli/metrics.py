"""A CLI snapshot -> Prometheus metric families. Pure. Every controller's series carry
``controller`` (collectors/families.py); docs/metrics.md has a sample of each family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client.core import Metric

from smartarray_agent.collectors.families import Families, controller_label, unique
from smartarray_agent.common import model, policy
from smartarray_agent.common.model import Controller, Snapshot

CONTROLLER_STATES = ("ok", "failed")
MODE_STATES = ("raid", "hba", "mixed")
CACHE_STATES = ("ok", "not_configured", "temporarily_disabled", "permanently_disabled")
BACKUP_SOURCES = ("batteries", "capacitors")
BACKUP_STATES = ("ok", "recharging", "failed")
POLICY_STATES = ("default", "enable", "disable")
LOGICAL_DRIVE_STATES = tuple(model.LOGICAL_DRIVE_STATES)
PHYSICAL_DRIVE_STATES = tuple(model.PHYSICAL_DRIVE_STATES)


HELP = {
    "smartarray_cli_info": "The vendor CLI's version (hpacucli, hpssacli or ssacli); always 1.",
    "smartarray_controller_info": "Controller identity; always 1.",
    "smartarray_controller_status": "Controller Status, one series per known state.",
    "smartarray_controller_mode": "Controller mode (RAID, HBA, mixed), one series per mode.",
    "smartarray_controller_temperature_celsius": "Controller board temperatures.",
    "smartarray_cache_present": "1 when a cache board is present (Cache Board Present).",
    "smartarray_cache_status": "Cache Status, one series per known state.",
    "smartarray_cache_size_bytes": "Total cache size.",
    "smartarray_cache_ratio": "Share of the cache given to reads or writes (0-1).",
    "smartarray_no_battery_write_cache_enabled":
        "1 when write cache is allowed without backup power (No-Battery Write Cache).",
    "smartarray_drive_write_cache_enabled":
        "1 when the physical drives' write cache is on (pre-Gen10 Drive Write Cache).",
    "smartarray_drive_write_cache_policy":
        "Gen10 drive write cache policy per drive usage, one series per policy.",
    "smartarray_write_cache_active": "1 when the controller caches writes now.",
    "smartarray_unprotected_write_cache":
        "1 when write cache can hold data that no healthy backup power protects.",
    "smartarray_backup_power_source": "Cache backup power source, one series per kind.",
    "smartarray_backup_power_units": "Number of batteries or capacitors (Battery/Capacitor Count).",
    "smartarray_backup_power_status":
        "Battery/Capacitor Status, one series per known state.",
    "smartarray_backup_power_status_info":
        "The Battery/Capacitor Status word when it is not a known state (state=\"other\").",
    "smartarray_cache_status_info":
        "The Cache Status word when it is not a known state (state=\"other\").",
    "smartarray_backup_power_charge_ratio":
        "Backup power charge (0-1) the interlock uses for this controller: the iLO's battery "
        "charge (Redfish) mapped to it, while fresh.",
    "smartarray_logical_drive_info": "Logical drive identity; always 1.",
    "smartarray_logical_drive_status": "Logical drive status, one series per known state.",
    "smartarray_logical_drive_status_info":
        "The logical drive's status word when it is not a known state (state=\"other\").",
    "smartarray_logical_drive_progress_ratio":
        "Progress (0-1) of the logical drive's rebuild, transformation or expansion.",
    "smartarray_logical_drive_size_bytes": "Logical drive size.",
    "smartarray_logical_drive_caching_enabled":
        "1 when the controller cache serves this logical drive (Caching).",
    "smartarray_physical_drive_info": "Physical drive identity; always 1.",
    "smartarray_physical_drive_status": "Physical drive status, one series per known state.",
    "smartarray_physical_drive_status_info":
        "The physical drive's status word when it is not a known state (state=\"other\").",
    "smartarray_physical_drive_progress_ratio": "Progress (0-1) of the physical drive's erase.",
    "smartarray_physical_drive_usage_remaining_ratio":
        "SSD wear: share of the rated endurance left (Usage remaining); negative past it.",
    "smartarray_physical_drive_power_on_seconds": "Time the drive has been powered on.",
    "smartarray_physical_drive_life_remaining_seconds":
        "SSD life left at the wear rate so far (Estimated Life Remaining).",
    "smartarray_physical_drive_max_temperature_celsius":
        "Highest temperature the drive recorded (Maximum Temperature).",
    "smartarray_physical_drive_size_bytes": "Physical drive size (decimal, as labelled).",
    "smartarray_physical_drive_temperature_celsius": "Physical drive temperature.",
}


def controller_ids(controllers: Sequence[Controller]) -> list[str]:
    return unique([controller_label(c.slot, c.serial, i) for i, c in enumerate(controllers)])


def families(snapshot: Snapshot, threshold_percent: float) -> list[Metric]:
    """``threshold_percent``: the interlock's, for ``smartarray_unprotected_write_cache``."""
    out = Families(HELP)
    if snapshot.cli_version:
        out.gauge("smartarray_cli_info", {"version": snapshot.cli_version}, 1.0)
    for ident, ctrl in zip(controller_ids(snapshot.controllers), snapshot.controllers,
                           strict=True):
        _controller(out, ident, ctrl, threshold_percent)
    return out.metrics()


def _controller(out: Families, ident: str, ctrl: Controller, threshold: float) -> None:
    c = {"controller": ident}
    out.gauge("smartarray_controller_info", {
        **c, "slot": ctrl.slot or "", "model": ctrl.model, "serial": ctrl.serial or "",
        "firmware": ctrl.firmware or "", "pci_address": ctrl.pci_address or "",
    }, 1.0)
    out.state("smartarray_controller_status", c, CONTROLLER_STATES, ctrl.status)
    out.state("smartarray_controller_mode", c, MODE_STATES, ctrl.mode, label="mode")
    temps = ctrl.temperatures
    for sensor, value in (("controller", temps.controller_c),
                          ("cache_module", temps.cache_module_c),
                          ("capacitor", temps.capacitor_c)):
        out.gauge("smartarray_controller_temperature_celsius", {**c, "sensor": sensor}, value)

    cache = ctrl.cache
    out.flag("smartarray_cache_present", c, cache.present)
    out.state("smartarray_cache_status", c, CACHE_STATES, cache.status)
    out.unknown_word("smartarray_cache_status_info", c, CACHE_STATES, cache.status)
    out.gauge("smartarray_cache_size_bytes", c, cache.size_bytes)
    if cache.read_percent is not None and cache.write_percent is not None:
        out.gauge("smartarray_cache_ratio", {**c, "op": "read"}, cache.read_percent / 100)
        out.gauge("smartarray_cache_ratio", {**c, "op": "write"}, cache.write_percent / 100)
    out.flag("smartarray_no_battery_write_cache_enabled", c, cache.no_battery_write_cache)
    out.flag("smartarray_drive_write_cache_enabled", c, cache.drive_write_cache)
    dwc_policy = cache.drive_write_cache_policy
    if dwc_policy is not None:
        for usage in ("configured", "unconfigured", "hba"):
            out.state("smartarray_drive_write_cache_policy", {**c, "usage": usage},
                      POLICY_STATES, getattr(dwc_policy, usage))
    out.flag("smartarray_write_cache_active", c, policy.write_cache_active(ctrl))
    out.flag("smartarray_unprotected_write_cache", c,
             bool(policy.unprotected_write_cache(ctrl, threshold)))

    power = ctrl.backup_power
    out.state("smartarray_backup_power_source", c, BACKUP_SOURCES, power.source,
              label="source")
    out.gauge("smartarray_backup_power_units", c, power.count)
    out.state("smartarray_backup_power_status", c, BACKUP_STATES, power.status)
    out.unknown_word("smartarray_backup_power_status_info", c, BACKUP_STATES, power.status)
    if power.charge_percent is not None:
        out.gauge("smartarray_backup_power_charge_ratio", c, power.charge_percent / 100)

    for ld in ctrl.logical_drives:
        d = {**c, "logical_drive": ld.drive_id}
        out.gauge("smartarray_logical_drive_info", {
            **d, "array": ld.array or "", "raid": ld.raid or "", "disk_name": ld.disk_name or "",
            "device": (ld.disk_name or "").removeprefix("/dev/"),  # node_exporter's device="sda"
        }, 1.0)
        _drive_health(out, "smartarray_logical_drive", d, LOGICAL_DRIVE_STATES, ld)
        out.flag("smartarray_logical_drive_caching_enabled", d, ld.caching)
    for pd in ctrl.physical_drives:
        d = {**c, "drive": pd.drive_id}
        out.gauge("smartarray_physical_drive_info", {
            **d, "array": pd.array or "", "interface": pd.interface or "",
            "model": pd.model or "", "serial": pd.serial or "", "firmware": pd.firmware or "",
        }, 1.0)
        _drive_health(out, "smartarray_physical_drive", d, PHYSICAL_DRIVE_STATES, pd)
        out.gauge("smartarray_physical_drive_temperature_celsius", d, pd.temperature_c)
        out.gauge("smartarray_physical_drive_max_temperature_celsius", d, pd.max_temperature_c)
        out.gauge("smartarray_physical_drive_usage_remaining_ratio", d,
                  _ratio(pd.usage_remaining_percent))
        out.gauge("smartarray_physical_drive_power_on_seconds", d,
                  None if pd.power_on_hours is None else pd.power_on_hours * 3600.0)
        out.gauge("smartarray_physical_drive_life_remaining_seconds", d,
                  None if pd.estimated_life_remaining_days is None
                  else pd.estimated_life_remaining_days * 86400.0)


def _drive_health(out: Families, prefix: str, labels: Mapping[str, str], states: Sequence[str],
                  drive: model.LogicalDrive | model.PhysicalDrive) -> None:
    """What logical and physical drives both have: status, progress, size."""
    out.state(f"{prefix}_status", labels, states, drive.status)
    out.unknown_word(f"{prefix}_status_info", labels, states, drive.status)
    out.gauge(f"{prefix}_progress_ratio", labels, _ratio(drive.progress_percent))
    out.gauge(f"{prefix}_size_bytes", labels, drive.size_bytes)


def _ratio(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)
