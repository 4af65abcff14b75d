"""The readable ``status`` table: one block per controller, with a line under it for each
drive that is not plainly ok (agent/moving.py)."""

from __future__ import annotations

from collections import Counter

from smartarray_agent.common.model import BackupPower, Cache, Controller, IloBattery, Snapshot
from smartarray_agent.moving import notes

UNKNOWN = "-"


def render(snapshot: Snapshot) -> str:
    batteries = "".join(map(_unassigned, snapshot.unassigned_batteries))
    if not snapshot.controllers:
        return ("" if snapshot.error else "no controllers in the output\n") + batteries
    return "\n".join([*map(_controller, snapshot.controllers), *([batteries] if batteries else [])])


def _unassigned(battery: IloBattery) -> str:
    """A battery the iLO lists that Redfish ties to no controller (docs/redfish.md)."""
    charge = "" if battery.charge_percent is None else f", charge {battery.charge_percent:g}%"
    return (f"battery {battery.index} ({battery.model or UNKNOWN}) from the iLO: "
            f"{battery.status or UNKNOWN}{charge}, backs no controller\n")


def _controller(ctrl: Controller) -> str:
    title = ctrl.model + (f" in slot {ctrl.slot}" if ctrl.slot is not None else "")
    if ctrl.embedded:
        title += " (embedded)"
    rows = [
        ("serial", ctrl.serial),
        ("firmware", ctrl.firmware),
        ("status", ctrl.status and ctrl.status.replace("_", " ")),
        ("mode", ctrl.mode),
        ("cache", _cache(ctrl.cache)),
        ("cache ratio", _ratio(ctrl.cache)),
        ("write cache", _switches(ctrl)),
        ("backup power", _backup(ctrl.backup_power)),
        ("logical drives", _drives([d.status for d in ctrl.logical_drives])),
        ("physical drives", _drives([d.status for d in ctrl.physical_drives])),
    ]
    if ctrl.cache.status_details:
        rows.insert(5, ("cache details", ctrl.cache.status_details))
    width = max(len(label) for label, _ in rows)
    lines = [title]
    lines += [f"  {label.ljust(width)}  {value or UNKNOWN}" for label, value in rows]
    lines += [f"  * {note.drive}: {note.what}" for note in notes(ctrl)]
    lines += [f"  notice: {notice}" for notice in ctrl.notices]
    return "\n".join(lines) + "\n"


def _cache(cache: Cache) -> str | None:
    parts = []
    if cache.present is False:
        parts.append("no cache module")
    if cache.status:
        parts.append(cache.status.replace("_", " "))
    if cache.size_bytes is not None:
        parts.append(_size(cache.size_bytes))
    return ", ".join(parts) or None


def _ratio(cache: Cache) -> str | None:
    if cache.read_percent is None or cache.write_percent is None:
        return None
    return f"{cache.read_percent}% read / {cache.write_percent}% write"


def _switches(ctrl: Controller) -> str | None:
    cache = ctrl.cache
    parts = []
    if cache.no_battery_write_cache is not None:
        parts.append(f"no-battery {_on_off(cache.no_battery_write_cache)}")
    if cache.drive_write_cache is not None:
        parts.append(f"drive {_on_off(cache.drive_write_cache)}")
    policy = cache.drive_write_cache_policy
    if policy is not None:
        for usage in ("configured", "unconfigured", "hba"):
            value = getattr(policy, usage)
            if value:
                parts.append(f"drive ({usage}) {value}")
    caching = [d.caching for d in ctrl.logical_drives if d.caching is not None]
    if caching:
        parts.append(f"logical drive caching {sum(caching)}/{len(caching)} on")
    return ", ".join(parts) or None


def _backup(power: BackupPower) -> str | None:
    parts = []
    if power.source:
        parts.append(power.source + (f" x{power.count}" if power.count is not None else ""))
    elif power.count is not None:
        parts.append(f"count {power.count}")
    if power.status_text:
        parts.append(power.status_text)
    if power.charge_percent is not None:
        parts.append(f"charge {power.charge_percent:g}%")
    return ", ".join(parts) or None


def _drives(statuses: list[str | None]) -> str | None:
    if not statuses:
        return None
    counts = Counter(status or "unknown" for status in statuses)
    detail = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(statuses)} ({detail})"


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} B"
