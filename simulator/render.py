"""Scenario state -> the lines a vendor CLI prints. Pure. Labels, order and indentation are
those of real captures of the generation (tests/test_simulator_conformance.py); a line with
no scenario field behind it carries a typical value."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from smartarray_agent.simulator.dialect import Dialect
from smartarray_agent.simulator.scenario import (
    Controller,
    LogicalDrive,
    PhysicalDrive,
    Scenario,
)

Lines = list[str]
_MODE_WORDS = {"raid": "RAID", "hba": "HBA", "mixed": "Mixed"}


def text(lines: Iterable[str]) -> str:
    return "\n".join(lines) + "\n"


def _on(flag: bool) -> str:
    return "Enabled" if flag else "Disabled"


def _hex(*parts: str, length: int = 16) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length].upper()


def header(ctrl: Controller, d: Dialect) -> str:
    head = f"{ctrl.model} in Slot {ctrl.slot}"
    if ctrl.embedded:
        head += " (Embedded)"
    if d.modes and ctrl.mode == "hba":
        head += " (HBA Mode)"
    return head


def _pairs(pairs: Iterable[tuple[str, str]], indent: int) -> Lines:
    pad = " " * indent
    return [f"{pad}{label}: {value}" for label, value in pairs]


def _cache_pairs(ctrl: Controller, d: Dialect) -> list[tuple[str, str]]:
    """A line whose value the scenario leaves unset is not printed."""
    cache, power, policy = ctrl.cache, ctrl.backup_power, ctrl.cache.drive_write_cache_policy

    def size(size_bytes: int | None) -> str | None:
        return None if size_bytes is None else d.size(size_bytes)

    out: list[tuple[str, str | None]] = [("Cache Board Present", str(cache.present))]
    if cache.present:
        out += [("Cache Status", cache.status), ("Cache Status Details", cache.status_details),
                ("Cache Disable Reason", cache.disable_reason),
                (d.ratio_label, None if cache.read_percent is None
                 else f"{cache.read_percent}% Read / {cache.write_percent}% Write")]
    if cache.drive_write_cache is not None:
        out.append(("Drive Write Cache", _on(cache.drive_write_cache)))
    if policy is not None:
        out += [("Configured Drive Write Cache Policy", policy.configured),
                ("Unconfigured Drive Write Cache Policy", policy.unconfigured),
                ("HBA Drive Write Cache Policy", policy.hba)]
    out += [("Total Cache Size", size(cache.size_bytes)),
            ("Total Cache Memory Available", size(cache.memory_available_bytes)),
            ("Battery Backed Cache Size", size(cache.battery_backed_size_bytes) if d.gen10
             else None)]
    if cache.present:
        out += [("No-Battery Write Cache", _on(cache.no_battery_write_cache)),
                ("Cache Backup Power Source", power.source),
                ("Battery/Capacitor Count", None if power.count is None else str(power.count))]
    shown = [(label, value) for label, value in out if value]
    if cache.present and power.count and power.status:
        shown.append(("Battery/Capacitor Status", power.status))
        shown += [("Failed Battery Location", where) for where in power.failed_locations]
    return shown


def _controller_pairs(ctrl: Controller, d: Dialect) -> list[tuple[str, str]]:
    old = d.generation == "hpacucli9"
    raid = ctrl.mode != "hba"
    out = [("Bus Interface", "PCI"), ("Slot", ctrl.slot), ("Serial Number", ctrl.serial)]
    if raid:
        out.append(("RAID 6 Status" if d.gen10 else "RAID 6 (ADG) Status", "Enabled"))
    out += [("Controller Status", ctrl.status), ("Hardware Revision", "B"),
            ("Firmware Version", ctrl.firmware)]
    if raid:
        out += [("Rebuild Priority", "Medium"), ("Expand Priority", "Medium"),
                ("Surface Scan Delay", "3 secs" if d.gen10 else "15 secs"),
                ("Surface Scan Mode", "Idle"), ("Queue Depth", "Automatic"),
                ("Monitor and Performance Delay", d.monitor_delay), ("Elevator Sort", "Enabled"),
                ("Degraded Performance Optimization", "Disabled"),
                ("Inconsistency Repair Policy", "Disabled")]
        if d.gen10:
            out.append(("Write Cache Bypass Threshold Size", "1040 KiB"))
        out += [("Wait for Cache Room", _on(ctrl.cache.wait_for_cache_room)),
                ("Surface Analysis Inconsistency Notification", "Disabled"),
                ("Post Prompt Timeout", "0 secs" if old else "15 secs")]
        out += _cache_pairs(ctrl, d)
        out.append(("SATA NCQ Supported", "True"))
        if not old:
            out.append(("Spare Activation Mode", "Activate on physical drive failure (default)"))
    if old:
        return out
    temps = ctrl.temperatures
    out += [(label, str(value)) for label, value in (
        ("Controller Temperature (C)", temps.controller_c),
        ("Cache Module Temperature (C)", temps.cache_module_c),
        ("Capacitor Temperature  (C)", temps.capacitor_c)) if value is not None]
    out += [("Number of Ports", "2 Internal only"),
            ("Driver Name", "smartpqi" if d.gen10 else "hpsa"),
            ("Driver Version", "Linux 2.1.18-045" if d.gen10 else "3.4.20")]
    if not raid:
        out.append(("HBA Mode Enabled", "True"))
    if d.cages:
        out.append(("PCI Address (Domain:Bus:Device.Function)", f"0000:{ctrl.slot:0>2}:00.0"))
    out += [("Controller Mode", _MODE_WORDS[ctrl.mode or "raid"]),
            ("Controller Mode Reboot", "Not Required"), ("Current Power Mode", "MaxPerformance")]
    return out


def controller_block(ctrl: Controller, d: Dialect) -> Lines:
    lines = [header(ctrl, d), *_pairs(_controller_pairs(ctrl, d), 3)]
    if d.gen10:
        for sensor in ctrl.temperatures.sensors:
            lines.append(f"   Sensor ID: {sensor.sensor_id}")
            lines += _pairs([("Location", sensor.location),
                             ("Current Value (C)", str(sensor.current_c)),
                             ("Max Value Since Power On", str(sensor.max_since_power_on_c))], 6)
    if d.cages:
        lines += _pairs([("Primary Boot Volume", "None"), ("Secondary Boot Volume", "None")], 3)
    return lines


def _interface(pd: PhysicalDrive) -> str:
    return f"Solid State {pd.interface}" if pd.ssd else pd.interface


def _place(pd: PhysicalDrive) -> list[str]:  # port, box, bay
    return pd.id.split(":")


def _where(pd: PhysicalDrive) -> str:
    port, box, bay = _place(pd)
    return f"port {port}:box {box}:bay {bay}"


def pd_line(pd: PhysicalDrive, d: Dialect) -> str:
    kind = f"{pd.interface} {'SSD' if pd.ssd else 'HDD'}" if d.new_drive_words else _interface(pd)
    return f"physicaldrive {pd.id} ({_where(pd)}, {kind}, {pd.size}, {pd.status})"


def ld_block(ctrl: Controller, ld: LogicalDrive, d: Dialect) -> Lines:
    old = d.generation == "hpacucli9"
    pairs = [("Size", ld.size), ("Fault Tolerance", f"{d.raid_prefix}{ld.raid}"),
             ("Heads", "255"), ("Sectors Per Track", "32"), ("Cylinders", "65535")]
    if old:
        pairs.append(("Stripe Size", "128 KB"))
    else:
        pairs += [("Strip Size", "256 KB"), ("Full Stripe Size", "256 KB")]
    pairs.append(("Status", ld.status))
    if not old:
        pairs.append(("MultiDomain Status", "OK"))
    lines = [f"      Logical Drive: {ld.id}", *_pairs(pairs, 9)]
    lines.append(f"         {d.ld_caching_label}{_on(ld.caching)}")
    disk = ld.disk_name or f"/dev/sd{chr(ord('a') + ctrl.logical_drives.index(ld) % 26)}"
    lines += _pairs([("Unique Identifier", "600508B1001C" + _hex(ctrl.serial, ld.id, length=20)),
                     ("Disk Name", disk), ("Mount Points", "None")], 9)
    members = [pd for pd in ctrl.physical_drives if pd.array == ld.array]
    if ld.raid in ("1", "1+0") and len(members) >= 2:
        half = len(members) // 2
        for number, group in enumerate((members[:half], members[half:]), d.mirror_group_base):
            lines.append(f"         Mirror Group {number}:")
            lines += [f"            {pd_line(pd, d)}" for pd in group]
    if not old:
        method = "Controller Cache" if ld.caching else "All disabled"
        lines += _pairs([("Drive Type", "Data"), ("LD Acceleration Method", method)], 9)
    return lines


def _drive_model(pd: PhysicalDrive) -> str:
    if pd.model:
        return pd.model
    if pd.interface == "SATA":
        return "ATA     MK000960GWEZH" if pd.ssd else "ATA     MB2000GCWDA"
    return "HP      MO0400JDVEU" if pd.ssd else "HP      EG0300FBDSP"


def pd_block(ctrl: Controller, pd: PhysicalDrive, d: Dialect) -> Lines:
    old = d.generation == "hpacucli9"
    if ctrl.mode == "hba":
        drive_type = "HBA Mode Drive"
    else:
        drive_type = "Unassigned Drive" if pd.array is None else "Data Drive"
    port, box, bay = _place(pd)
    pairs = [("Port", port), ("Box", box), ("Bay", bay), ("Status", pd.status),
             ("Drive Type", drive_type), ("Interface Type", _interface(pd)), ("Size", pd.size)]
    if not old:
        pairs.append(("Drive exposed to OS", str(ctrl.mode == "hba")))
        if d.cages:
            pairs.append(("Logical/Physical Block Size", "512/512"))
        else:
            pairs.append(("Native Block Size", "512"))
    if not pd.ssd:
        pairs.append(("Rotational Speed", "10000" if pd.interface == "SAS" else "7200"))
    pairs += [("Firmware Revision", pd.firmware),
              ("Serial Number", pd.serial or _hex(ctrl.serial, pd.id, length=20)),
              ("Model", _drive_model(pd))]
    if not old:
        pairs += [("Current Temperature (C)", "31"), ("Maximum Temperature (C)", "38")]
    sas = pd.interface == "SAS"
    rate = "3.0GBPS, Unknown" if old else ("6.0Gbps, Unknown" if sas else "6.0Gbps")
    pairs += [("PHY Count", "2" if sas else "1"), ("PHY Transfer Rate", rate)]
    return [f"      physicaldrive {pd.id}", *_pairs(pairs, 9)]


def _groups(ctrl: Controller) -> list[tuple[str | None, list[PhysicalDrive]]]:
    """Drives by array, then the ones in none (``None``)."""
    groups = [(a.name, [pd for pd in ctrl.physical_drives if pd.array == a.name])
              for a in ctrl.arrays]
    spare = [pd for pd in ctrl.physical_drives if pd.array is None]
    return groups + ([(None, spare)] if spare else [])


def _cages(ctrl: Controller, d: Dialect) -> Lines:
    cages: dict[tuple[str, str], list[PhysicalDrive]] = {}
    for pd in ctrl.physical_drives:
        port, box, _ = _place(pd)
        cages.setdefault((port, box), []).append(pd)
    lines: Lines = []
    for (port, box), drives in cages.items():
        bays = -(-len(drives) // 4) * 4
        lines += ["", "", f"   Internal Drive Cage at Port {port}, Box {box}, OK", ""]
        lines += _pairs([("Drive Bays", str(bays)), ("Port", port), ("Box", box),
                         ("Location", "Internal")], 6)
        lines += ["", "   Physical Drives", *[f"      {pd_line(pd, d)}" for pd in drives]]
    return lines


def _ports(ctrl: Controller) -> Lines:
    lines: Lines = []
    ports = list(dict.fromkeys(_place(pd)[0] for pd in ctrl.physical_drives))
    for number, port in enumerate(ports):
        lines += ["", f"   Port Name: {port}"]
        lines += _pairs([("Port ID", str(number)), ("Port Connection Number", str(number)),
                         ("SAS Address", "5001438" + _hex(ctrl.serial, port, length=9)),
                         ("Port Location", "Internal")], 9)
    return lines


def _array_lines(ctrl: Controller, name: str, drives: list[PhysicalDrive], d: Dialect) -> Lines:
    array = next(a for a in ctrl.arrays if a.name == name)
    pairs = [("Interface Type", _interface(drives[0]) if drives else "SAS"),
             ("Unused Space", d.unused_space), ("Status", array.status)]
    if d.generation != "hpacucli9":
        pairs += [("MultiDomain Status", "OK"), ("Array Type", "Data")]
        pairs.append(("Smart Path" if d.cages else "HP SSD Smart Path", "disable"))
    gap = ["", ""] if d.cages else ["", "", ""]
    lines = ["", f"   Array: {name}", *_pairs(pairs, 6), *gap]
    for ld in (ld for ld in ctrl.logical_drives if ld.array == name):
        lines += [*ld_block(ctrl, ld, d), ""]
    for pd in drives:
        lines += [*pd_block(ctrl, pd, d), ""]
    return lines


def config_detail_block(ctrl: Controller, d: Dialect) -> Lines:
    lines = controller_block(ctrl, d)
    if d.cages:
        cages, ports = _cages(ctrl, d), _ports(ctrl)
        lines += [*cages, *ports, ""] if d.gen10 else [*ports, *cages, ""]
    for name, drives in _groups(ctrl):
        if name is not None:
            lines += _array_lines(ctrl, name, drives, d)
            continue
        lines += ["", "   unassigned", ""]
        for pd in drives:
            lines += [*pd_block(ctrl, pd, d), ""]
    return lines


def list_line(ctrl: Controller, d: Dialect) -> str:
    return f"{header(ctrl, d):<40}  (sn: {ctrl.serial})"


def status_block(ctrl: Controller, d: Dialect) -> Lines:
    lines = [header(ctrl, d), f"   Controller Status: {ctrl.status}"]
    cache, power = ctrl.cache, ctrl.backup_power
    if ctrl.mode == "hba" or not cache.present:
        return lines
    if cache.status:
        lines.append(f"   Cache Status: {cache.status}")
    if power.count and power.status:
        lines.append(f"   Battery/Capacitor Status: {power.status}")
    return lines


def show(d: Dialect, what: str, ctrls: list[Controller]) -> Lines:
    if what == "list":
        return ["", *[list_line(c, d) for c in ctrls], ""]
    block, gap = {"status": (status_block, [""]), "detail": (controller_block, [""]),
                  "config detail": (config_detail_block, ["", ""])}[what]
    lines: Lines = []
    for ctrl in ctrls:
        lines += [*gap, *block(ctrl, d)]
    return lines + [""]


def version(scenario: Scenario, d: Dialect) -> Lines:
    number = scenario.cli_version or d.default_version
    return ["", *(line.format(version=number) for line in d.version_lines), ""]


def error(*message: str) -> Lines:
    return ["", *message, ""]


def options(current: str | None, choices: list[str]) -> Lines:
    """A ``param=?`` answer. Guess: shaped like the seen ``Available options are:`` list."""
    marked = [f"       {c} (current value)" if c == current else f"       {c}" for c in choices]
    return ["", "Available options are:", *marked, ""]


def banner(scenario: Scenario, d: Dialect) -> Lines:
    return [d.banner.format(version=scenario.cli_version or d.default_version),
            "Detecting Controllers...Done.", 'Type "help" for a list of supported commands.',
            'Type "exit" to close the console.', ""]
