"""Collector results -> Prometheus metric families. Pure: no I/O, no clock (``now`` is given).

Conventions (DESIGN.md): prefix ``smartarray_``, units in names, ratios 0-1, identity in
``_info`` metrics, states as a gauge with a ``state`` label that emits every known state
(0/1) plus ``other`` (a word outside the list) and ``absent`` (the CLI printed no status),
and no raw status text in any label. docs/metrics.md documents every family in ``HELP``.

Every controller-level series carries ``controller``: the slot (``0``, ``0b``), else
``sn:<serial>``, else ``index:<n>``; a repeated value gets ``#2``, ``#3`` appended.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest

from smartarray_agent import model, policy
from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.redfish.merge import merge_charge
from smartarray_agent.collectors.redfish.metrics import battery_families
from smartarray_agent.collectors.redfish.resources import Reading
from smartarray_agent.collectors.sysfs import SmartArrayHost
from smartarray_agent.model import Controller, Snapshot

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

CONTROLLER_STATES = ("ok", "failed")
MODE_STATES = ("raid", "hba", "mixed")
CACHE_STATES = ("ok", "not_configured", "temporarily_disabled", "permanently_disabled")
BACKUP_SOURCES = ("batteries", "capacitors")
BACKUP_STATES = ("ok", "recharging", "failed")
POLICY_STATES = ("default", "enable", "disable")
LOGICAL_DRIVE_STATES = tuple(model.LOGICAL_DRIVE_STATES)
PHYSICAL_DRIVE_STATES = tuple(model.PHYSICAL_DRIVE_STATES)
TRANSPORT_MODES = ("performant", "simple")
OTHER, ABSENT = "other", "absent"

HELP = {
    "smartarray_collector_success": "1 when the collector's last attempt succeeded, else 0.",
    "smartarray_collector_duration_seconds": "How long the collector's last attempt took.",
    "smartarray_collector_last_success_timestamp_seconds":
        "Unix time the collector last succeeded; its data is that old.",
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
    "smartarray_host_info": "Smart Array SCSI host in sysfs: driver, PCI identity; always 1.",
    "smartarray_controller_lockup_detected":
        "1 when the hpsa driver reports a controller lockup (sysfs lockup_detected).",
    "smartarray_host_transport_mode": "hpsa/cciss transport mode, one series per mode.",
}


@dataclass(frozen=True)
class MetricSettings:
    stale_after_s: float | None  # None: never drop the last good values
    battery_threshold_percent: float = 80.0
    charge_max_age_s: float | None = None  # how old a Redfish charge may be and still count


def is_fresh(result: CollectorResult, now: float, settings: MetricSettings) -> bool:
    """The result's data is served: it exists and is not older than ``stale_after_s``."""
    if result.data is None or result.last_success_at is None:
        return False
    return settings.stale_after_s is None or now - result.last_success_at <= settings.stale_after_s


def stale_at(
    results: Iterable[CollectorResult], settings: MetricSettings, now: float
) -> float | None:
    """The last moment all data served at ``now`` is still fresh (None: no data will go
    stale); just after it, some of it is dropped."""
    if settings.stale_after_s is None:
        return None
    times = [r.last_success_at + settings.stale_after_s for r in results
             if r.data is not None and r.last_success_at is not None]
    return min((t for t in times if t >= now), default=None)


def render(results: Sequence[CollectorResult], *, now: float, settings: MetricSettings) -> bytes:
    """The text exposition (format 0.0.4) of ``results``."""
    return generate_latest(_Exposition(families(results, now=now, settings=settings)))


def families(
    results: Sequence[CollectorResult], *, now: float, settings: MetricSettings
) -> list[Metric]:
    out = _Families()
    for result in results:
        labels = {"collector": result.name}
        out.gauge("smartarray_collector_success", labels, float(result.success))
        out.gauge("smartarray_collector_duration_seconds", labels, result.duration_s)
        if result.last_success_at is not None:
            out.gauge(
                "smartarray_collector_last_success_timestamp_seconds", labels,
                result.last_success_at,
            )
    fresh = [result for result in results if is_fresh(result, now, settings)]
    reading = next((r.data for r in fresh if isinstance(r.data, Reading)), None)
    batteries: list[Metric] = []
    for result in fresh:
        if isinstance(result.data, Snapshot):
            snapshot = result.data
            if reading is not None and settings.charge_max_age_s is not None:
                snapshot = merge_charge(snapshot, reading, now, settings.charge_max_age_s)
            _snapshot(out, snapshot, settings.battery_threshold_percent)
        elif isinstance(result.data, tuple):
            _hosts(out, result.data)
        elif isinstance(result.data, Reading):
            batteries = battery_families(result.data)
    return out.metrics() + batteries


class _Families:
    def __init__(self) -> None:
        self._by_name: dict[str, GaugeMetricFamily] = {}

    def gauge(self, name: str, labels: dict[str, str], value: float | None) -> None:
        if value is None:
            return
        family = self._by_name.get(name)
        if family is None:
            family = GaugeMetricFamily(name, HELP[name], labels=list(labels))
            self._by_name[name] = family
        family.add_metric(list(labels.values()), value)

    def flag(self, name: str, labels: dict[str, str], value: bool | None) -> None:
        self.gauge(name, labels, None if value is None else float(value))

    def state(
        self, name: str, labels: dict[str, str], known: tuple[str, ...], value: str | None
    ) -> None:
        current = ABSENT if value is None else value if value in known else OTHER
        for state in (*known, OTHER, ABSENT):
            self.gauge(name, {**labels, "state": state}, float(state == current))

    def metrics(self) -> list[Metric]:
        return list(self._by_name.values())


class _Exposition:
    """What generate_latest wants: something with ``collect()``."""

    def __init__(self, metrics: list[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> list[Metric]:
        return self._metrics


def controller_ids(controllers: Sequence[Controller]) -> list[str]:
    """The ``controller`` label of each controller, in order, unique."""
    ids: list[str] = []
    for index, ctrl in enumerate(controllers):
        if ctrl.slot:
            base = ctrl.slot
        elif ctrl.serial:
            base = f"sn:{ctrl.serial}"
        else:
            base = f"index:{index}"
        ident, n = base, 1
        while ident in ids:
            n += 1
            ident = f"{base}#{n}"
        ids.append(ident)
    return ids


def _snapshot(out: _Families, snapshot: Snapshot, threshold: float) -> None:
    if snapshot.cli_version:
        out.gauge("smartarray_cli_info", {"version": snapshot.cli_version}, 1.0)
    for ident, ctrl in zip(controller_ids(snapshot.controllers), snapshot.controllers,
                           strict=True):
        _controller(out, ident, ctrl, threshold)


def _controller(out: _Families, ident: str, ctrl: Controller, threshold: float) -> None:
    c = {"controller": ident}
    out.gauge("smartarray_controller_info", {
        **c, "slot": ctrl.slot or "", "model": ctrl.model, "serial": ctrl.serial or "",
        "firmware": ctrl.firmware or "", "pci_address": ctrl.pci_address or "",
    }, 1.0)
    out.state("smartarray_controller_status", c, CONTROLLER_STATES, ctrl.status)
    out.state("smartarray_controller_mode", c, MODE_STATES, ctrl.mode)
    temps = ctrl.temperatures
    for sensor, value in (("controller", temps.controller_c),
                          ("cache_module", temps.cache_module_c),
                          ("capacitor", temps.capacitor_c)):
        out.gauge("smartarray_controller_temperature_celsius", {**c, "sensor": sensor}, value)

    cache = ctrl.cache
    out.flag("smartarray_cache_present", c, cache.present)
    out.state("smartarray_cache_status", c, CACHE_STATES, cache.status)
    _unknown_word(out, "smartarray_cache_status_info", c, CACHE_STATES, cache.status)
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
             policy.unprotected_write_cache(ctrl, threshold))

    power = ctrl.backup_power
    out.state("smartarray_backup_power_source", c, BACKUP_SOURCES, power.source)
    out.gauge("smartarray_backup_power_units", c, power.count)
    out.state("smartarray_backup_power_status", c, BACKUP_STATES, power.status)
    _unknown_word(out, "smartarray_backup_power_status_info", c, BACKUP_STATES, power.status)
    if power.charge_percent is not None:
        out.gauge("smartarray_backup_power_charge_ratio", c, power.charge_percent / 100)

    for ld in ctrl.logical_drives:
        d = {**c, "logical_drive": ld.drive_id}
        out.gauge("smartarray_logical_drive_info", {
            **d, "array": ld.array or "", "raid": ld.raid or "", "disk_name": ld.disk_name or "",
            "device": (ld.disk_name or "").removeprefix("/dev/"),  # node_exporter's device="sda"
        }, 1.0)
        out.state("smartarray_logical_drive_status", d, LOGICAL_DRIVE_STATES, ld.status)
        _unknown_word(out, "smartarray_logical_drive_status_info", d, LOGICAL_DRIVE_STATES,
                      ld.status)
        out.gauge("smartarray_logical_drive_progress_ratio", d, _ratio(ld.progress_percent))
        out.gauge("smartarray_logical_drive_size_bytes", d, ld.size_bytes)
        out.flag("smartarray_logical_drive_caching_enabled", d, ld.caching)
    for pd in ctrl.physical_drives:
        d = {**c, "drive": pd.drive_id}
        out.gauge("smartarray_physical_drive_info", {
            **d, "array": pd.array or "", "interface": pd.interface or "",
            "model": pd.model or "", "serial": pd.serial or "", "firmware": pd.firmware or "",
        }, 1.0)
        out.state("smartarray_physical_drive_status", d, PHYSICAL_DRIVE_STATES, pd.status)
        _unknown_word(out, "smartarray_physical_drive_status_info", d, PHYSICAL_DRIVE_STATES,
                      pd.status)
        out.gauge("smartarray_physical_drive_progress_ratio", d, _ratio(pd.progress_percent))
        out.gauge("smartarray_physical_drive_size_bytes", d, pd.size_bytes)
        out.gauge("smartarray_physical_drive_temperature_celsius", d, pd.temperature_c)
        out.gauge("smartarray_physical_drive_max_temperature_celsius", d, pd.max_temperature_c)
        out.gauge("smartarray_physical_drive_usage_remaining_ratio", d,
                  _ratio(pd.usage_remaining_percent))
        out.gauge("smartarray_physical_drive_power_on_seconds", d,
                  None if pd.power_on_hours is None else pd.power_on_hours * 3600.0)
        out.gauge("smartarray_physical_drive_life_remaining_seconds", d,
                  None if pd.estimated_life_remaining_days is None
                  else pd.estimated_life_remaining_days * 86400.0)


def _ratio(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)


def _unknown_word(
    out: _Families, name: str, labels: dict[str, str], known: tuple[str, ...], word: str | None
) -> None:
    """The status word itself, only when it is outside ``known`` (the series that alert on
    state="other" take it from here); no series otherwise, so known states do not churn."""
    if word is not None and word not in known:
        out.gauge(name, {**labels, "word": word}, 1.0)


def _hosts(out: _Families, hosts: tuple[SmartArrayHost, ...]) -> None:
    for host in hosts:
        h = {"pci_address": host.pci_address}
        out.gauge("smartarray_host_info", {
            **h, "host": host.host, "driver": host.driver,
            "vendor_id": host.vendor_id or "", "device_id": host.device_id or "",
            "subsystem_vendor_id": host.subsystem_vendor_id or "",
            "subsystem_device_id": host.subsystem_device_id or "",
            "firmware": host.firmware or "", "model": host.model or "",
            "serial": host.serial or "",
        }, 1.0)
        out.flag("smartarray_controller_lockup_detected", h, host.lockup_detected)
        out.state("smartarray_host_transport_mode", h, TRANSPORT_MODES, host.transport_mode)
