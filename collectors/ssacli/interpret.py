"""The scanned blocks' meaning: each generation's keys mapped onto the model, both labels of a
renamed field read (``Cache Ratio`` / ``Accelerator Ratio``). A drive printed several times
(cage list, mirror group, detail block) is one drive, its fields merged."""

from __future__ import annotations

import re

from smartarray_agent.collectors.ssacli import values
from smartarray_agent.collectors.ssacli.scan import Block, ControllerText
from smartarray_agent.common.model import (
    Array,
    BackupPower,
    Cache,
    Component,
    Controller,
    DriveWriteCachePolicy,
    LogicalDrive,
    PhysicalDrive,
    Temperatures,
    TemperatureSensor,
    normalise_status,
)

_MODES = {"raid": "raid", "raid mode": "raid", "hba": "hba", "hba mode": "hba",
          "mixed": "mixed", "mixed mode": "mixed"}
# Bounded, so that a search tried from every "port" of a long text stays linear in it
_PORT_BOX_BAY = re.compile(
    r"port\s+(?P<port>[^:]{1,64}):box\s+(?P<box>[^:]{1,64}):bay\s+(?P<bay>\S+)")
_INTERFACE = re.compile(r"SAS|SATA|SSD|HDD|NVMe|SCSI", re.I)
_LD_INFO = re.compile(r"^(?P<size>[\d.]+\s*[KMGT]i?B),\s*(?P<raid>RAID\s.*?),\s*(?P<status>.+)$")


class _Pairs:  # a block's pairs by key, any case
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs
        self._first = {key.lower(): value for key, value in reversed(pairs)}

    def get(self, *keys: str) -> str | None:  # the first value of the first key printed
        return next((self._first[k.lower()] for k in keys if k.lower() in self._first), None)


def controller(text: ControllerText) -> Controller:
    pairs = _Pairs(text.pairs)
    ctrl = Controller(
        slot=text.slot,
        location=text.place,
        model=text.model,
        embedded=True if "Embedded" in text.tags else None,
        serial=text.serial or values.text_or_none(pairs.get("Serial Number")),
        firmware=values.text_or_none(pairs.get("Firmware Version", "RAID Stack Version")),
        status=normalise_status(pairs.get("Controller Status")),
        mode=_mode(text.tags, pairs),
        pci_address=values.pci_address(pairs.get("PCI Address (Domain:Bus:Device.Function)")),
        cache=_cache(pairs),
        backup_power=_backup_power(pairs),
        temperatures=_temperatures(pairs, text.blocks),
        notices=text.notices,
        raw=text.pairs,
        unparsed_lines=text.unparsed,
    )
    _drives_and_components(ctrl, text.blocks)
    return ctrl


def _mode(tags: list[str], pairs: _Pairs) -> str | None:
    printed = (pairs.get("Controller Mode") or "").strip()
    mode = next((_MODES[w.lower()] for w in (printed, *tags) if w.lower() in _MODES), None)
    return mode or ("hba" if values.switch(pairs.get("HBA Mode Enabled")) else None)


def _cache(pairs: _Pairs) -> Cache:
    ratio = values.cache_ratio(pairs.get("Cache Ratio", "Accelerator Ratio"))
    policies = {
        usage: normalise_status(pairs.get(f"{label} Drive Write Cache Policy"))
        for usage, label in (("configured", "Configured"), ("unconfigured", "Unconfigured"),
                             ("hba", "HBA"))
    }
    return Cache(
        present=values.switch(pairs.get("Cache Board Present")),
        status=normalise_status(pairs.get("Cache Status")),
        status_details=values.text_or_none(pairs.get("Cache Status Details")),
        disable_reason=values.text_or_none(pairs.get("Cache Disable Reason")),
        size_bytes=values.cache_size_bytes(pairs.get("Total Cache Size")),
        memory_available_bytes=values.cache_size_bytes(pairs.get("Total Cache Memory Available")),
        battery_backed_size_bytes=values.cache_size_bytes(pairs.get("Battery Backed Cache Size")),
        read_percent=ratio[0] if ratio else None,
        write_percent=ratio[1] if ratio else None,
        no_battery_write_cache=values.switch(pairs.get("No-Battery Write Cache")),
        drive_write_cache=values.switch(pairs.get("Drive Write Cache")),
        drive_write_cache_policy=(
            DriveWriteCachePolicy(**policies) if any(policies.values()) else None
        ),
        wait_for_cache_room=values.switch(pairs.get("Wait for Cache Room")),
    )


def _backup_power(pairs: _Pairs) -> BackupPower:
    status_text = values.text_or_none(pairs.get("Battery/Capacitor Status", "Battery Status"))
    return BackupPower(
        source=normalise_status(pairs.get("Cache Backup Power Source")),
        count=values.integer(pairs.get("Battery/Capacitor Count")),
        status=normalise_status(status_text),
        status_text=status_text,
        failed_locations=[v for k, v in pairs.pairs if k.lower() == "failed battery location"
                          and v],
    )


def _temperatures(pairs: _Pairs, blocks: list[Block]) -> Temperatures:
    sensors = [_sensor(block.ident, _Pairs(block.pairs)) for block in blocks
               if block.kind == "sensor"]
    return Temperatures(
        controller_c=values.number(pairs.get("Controller Temperature (C)")),
        cache_module_c=values.number(pairs.get("Cache Module Temperature (C)")),
        capacitor_c=values.number(pairs.get("Capacitor Temperature (C)")),
        sensors=sensors,
    )


def _sensor(ident: str, pairs: _Pairs) -> TemperatureSensor:
    return TemperatureSensor(sensor_id=ident, location=values.text_or_none(pairs.get("Location")),
                             current_c=values.number(pairs.get("Current Value (C)")),
                             max_since_power_on_c=values.number(
                                 pairs.get("Max Value Since Power On")))


def _drives_and_components(ctrl: Controller, blocks: list[Block]) -> None:
    arrays: dict[str, Array] = {}
    lds: dict[str, LogicalDrive] = {}
    pds: dict[str, PhysicalDrive] = {}
    for block in blocks:
        if block.kind == "array":
            _merge_array(arrays, block)
        elif block.kind in ("ld_line", "ld_detail"):
            _fill_logical(lds.setdefault(block.ident, LogicalDrive(drive_id=block.ident)), block)
        elif block.kind in ("pd_line", "pd_detail"):
            _fill_physical(pds.setdefault(block.ident, PhysicalDrive(drive_id=block.ident)),
                           block)
        elif block.kind == "component":
            ctrl.components.append(Component(title=block.ident, raw=block.pairs))
    ctrl.arrays = list(arrays.values())
    ctrl.logical_drives = list(lds.values())
    ctrl.physical_drives = list(pds.values())


def _merge_array(arrays: dict[str, Array], block: Block) -> None:
    """``array A (SAS, Unused Space: 0 MB)``, ``array B (Failed)`` or an ``Array: A`` block."""
    array = arrays.setdefault(block.ident, Array(name=block.ident))
    for part in (block.info or "").split(","):
        word = part.strip()
        if not word or ":" in word:
            continue
        if _INTERFACE.search(word):
            array.interface = array.interface or word
        else:
            array.status = array.status or normalise_status(word)
    pairs = _Pairs(block.pairs)
    array.status = normalise_status(pairs.get("Status")) or array.status
    array.interface = values.text_or_none(pairs.get("Interface Type")) or array.interface
    array.raw += block.pairs  # in place: a block printed n times costs n, not n squared


def _fill_logical(drive: LogicalDrive, block: Block) -> None:
    drive.array = drive.array or block.array
    if block.info is not None:
        match = _LD_INFO.match(block.info)
        if match:
            drive.size_text = drive.size_text or match.group("size")
            drive.raid = drive.raid or match.group("raid").strip()
            drive.status_text = drive.status_text or match.group("status").strip()
    pairs = _Pairs(block.pairs)
    size = values.text_or_none(pairs.get("Size"))
    drive.size_text = drive.size_text or size
    drive.size_bytes = values.logical_size_bytes(drive.size_text)
    fault_tolerance = values.text_or_none(pairs.get("Fault Tolerance"))
    if fault_tolerance and not drive.raid:
        drive.raid = fault_tolerance if fault_tolerance.startswith("RAID") else (
            f"RAID {fault_tolerance}")
    drive.status_text = values.text_or_none(pairs.get("Status")) or drive.status_text
    drive.status, drive.progress_percent = values.drive_status(drive.status_text)
    caching = values.switch(pairs.get("Caching", "Array Accelerator"))
    drive.caching = caching if caching is not None else drive.caching
    drive.disk_name = values.text_or_none(pairs.get("Disk Name")) or drive.disk_name
    drive.raw += block.pairs


def _fill_physical(drive: PhysicalDrive, block: Block) -> None:
    if block.array is not None and (drive.array is None or block.kind == "pd_line"):
        drive.array = block.array
    if block.info is not None:
        parts = [part.strip() for part in block.info.split(",")]
        where = _PORT_BOX_BAY.search(parts[0])
        if where:
            drive.port = drive.port or where.group("port").strip()
            drive.box = drive.box or where.group("box").strip()
            drive.bay = drive.bay or where.group("bay").strip()
        if len(parts) >= 4:
            drive.interface = drive.interface or parts[1]
            drive.size_text = drive.size_text or parts[2]
            drive.status_text = drive.status_text or ", ".join(parts[3:])
    pairs = _Pairs(block.pairs)
    for name, key, read in _DETAIL:  # a value the detail block gives replaces the line's
        value = read(pairs.get(key))
        if value is not None:
            setattr(drive, name, value)
    drive.size_bytes = values.physical_size_bytes(drive.size_text)
    drive.status, progress = values.drive_status(drive.status_text)
    if progress is None:  # the status line's, else the erase's, else as it was
        progress = values.percent(pairs.get("Erase Percent Complete"))
    if progress is not None:
        drive.progress_percent = progress
    drive.raw += block.pairs


# A physical drive's field, the key of its detail block that gives it, and how it is read
_DETAIL = (
    ("port", "Port", values.text_or_none), ("box", "Box", values.text_or_none),
    ("bay", "Bay", values.text_or_none), ("interface", "Interface Type", values.text_or_none),
    ("size_text", "Size", values.text_or_none), ("status_text", "Status", values.text_or_none),
    ("failure_reason", "Last Failure Reason", values.text_or_none),
    ("model", "Model", values.spaced), ("serial", "Serial Number", values.text_or_none),
    ("firmware", "Firmware Revision", values.text_or_none),
    ("temperature_c", "Current Temperature (C)", values.number),
    ("max_temperature_c", "Maximum Temperature (C)", values.number),
    ("usage_remaining_percent", "Usage remaining", values.percent),
    ("power_on_hours", "Power On Hours", values.integer),
    ("estimated_life_remaining_days", "Estimated Life Remaining based on workload to date",
     values.days),
    ("ssd_smart_trip_wearout", "SSD Smart Trip Wearout", values.switch),
)
