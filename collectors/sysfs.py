"""Smart Array hosts as the kernel sees them: every SCSI host (and ``ccissN`` device) whose
PCI function is bound to ``hpsa``, ``cciss`` or ``smartpqi``, found through pyudev and read
from its sysfs directory (any tree: tests build one); a udev monitor reports a host, its PCI
function or a disk appearing or going."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from prometheus_client.core import Metric

from smartarray_agent.collectors.base import CollectionError, Collector
from smartarray_agent.collectors.families import Families

log = logging.getLogger(__name__)

TRANSPORT_MODES = ("performant", "simple")
HELP = {
    "smartarray_host_info": "Smart Array SCSI host in sysfs: driver, PCI identity; always 1.",
    "smartarray_controller_lockup_detected":
        "1 when the hpsa driver reports a controller lockup (sysfs lockup_detected).",
    "smartarray_host_transport_mode": "hpsa/cciss transport mode, one series per mode.",
}

DRIVERS = ("hpsa", "cciss", "smartpqi")
WATCHED_SUBSYSTEMS = ("scsi_host", "cciss", "block", "pci")
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_CCISS_HOST = re.compile(r"^cciss\d+$")
_LOCKUP = re.compile(r"^(?:ld=)?(\d+)$")
_APPEAR_OR_GO = ("add", "remove", "bind", "unbind")
_INFO_LABELS = ("host", "driver", "pci_address", "vendor_id", "device_id", "subsystem_vendor_id",
                "subsystem_device_id", "firmware", "model", "serial")


@dataclass(frozen=True)
class SmartArrayHost:
    host: str  # "host0", "cciss0"
    driver: str
    pci_address: str  # "0000:03:00.0"
    vendor_id: str | None = None  # "0x103c"
    device_id: str | None = None
    subsystem_vendor_id: str | None = None
    subsystem_device_id: str | None = None
    firmware: str | None = None  # hpsa firmware_revision, smartpqi firmware_version
    model: str | None = None  # smartpqi only
    serial: str | None = None  # smartpqi only
    lockup_detected: bool | None = None  # hpsa only
    transport_mode: str | None = None  # hpsa, cciss: "performant" or "simple"

    def known_fields(self) -> int:
        return sum(getattr(self, f.name) is not None for f in fields(self))



def read_host(device_dir: Path) -> SmartArrayHost | None:
    """The Smart Array host at ``device_dir`` (a ``scsi_host`` or ``ccissN``), or None."""
    real = device_dir.resolve()
    pci = next((p for p in (real, *real.parents) if _PCI_ADDRESS.match(p.name)), None)
    if pci is None:
        return None
    driver = _driver_of(pci)
    if driver not in DRIVERS:
        return None
    lockup = _LOCKUP.match(_attribute(real, "lockup_detected") or "")
    return SmartArrayHost(
        host=real.name,
        driver=driver,
        pci_address=pci.name,
        vendor_id=_attribute(pci, "vendor"),
        device_id=_attribute(pci, "device"),
        subsystem_vendor_id=_attribute(pci, "subsystem_vendor"),
        subsystem_device_id=_attribute(pci, "subsystem_device"),
        firmware=_attribute(real, "firmware_revision") or _attribute(real, "firmware_version"),
        model=_attribute(real, "model"),
        serial=_attribute(real, "serial_number"),
        lockup_detected=int(lockup.group(1)) != 0 if lockup else None,
        transport_mode=_attribute(real, "transport_mode"),
    )


def udev_host_dirs() -> list[Path]:
    try:
        import pyudev

        context = pyudev.Context()
        found = [Path(d.sys_path) for d in context.list_devices(subsystem="cciss")]
        found = [p for p in found if _CCISS_HOST.match(p.name)]
        found += [Path(d.sys_path) for d in context.list_devices(subsystem="scsi_host")]
    except (ImportError, OSError) as error:
        raise CollectionError(f"cannot list devices through udev: {error}") from error
    return found


class SysfsCollector(Collector[tuple[SmartArrayHost, ...]]):
    """One host per PCI function (of a ``cciss`` board's ``ccissN`` and SCSI host, the one
    with more attributes); an early collection when udev says one came or went."""

    name = "sysfs"
    interval_s: float | None = None
    HELP = HELP

    def __init__(self, find_host_dirs: Callable[[], Iterable[Path]] = udev_host_dirs) -> None:
        self._find = find_host_dirs
        self._known: frozenset[str] = frozenset()  # PCI functions of the last collection
        self._observer: Any = None  # pyudev's MonitorObserver, once watching
        self._poke: Callable[[], None] | None = None

    def collect(self) -> tuple[SmartArrayHost, ...]:
        by_function: dict[str, SmartArrayHost] = {}
        for directory in self._find():
            host = read_host(directory)
            if host is None:
                continue
            kept = by_function.get(host.pci_address)
            if kept is None or host.known_fields() > kept.known_fields():
                by_function[host.pci_address] = host
        self._known = frozenset(by_function)
        return tuple(sorted(by_function.values(), key=lambda h: h.pci_address))

    def families(self, data: tuple[SmartArrayHost, ...], now: float) -> list[Metric]:
        out = Families(HELP)
        for host in data:
            h = {"pci_address": host.pci_address}
            out.gauge("smartarray_host_info", {  # every text field; "" for one not read
                name: getattr(host, name) or "" for name in _INFO_LABELS}, 1.0)
            out.flag("smartarray_controller_lockup_detected", h, host.lockup_detected)
            out.state("smartarray_host_transport_mode", h, TRANSPORT_MODES, host.transport_mode)
        return out.metrics()

    def summary(self, data: tuple[SmartArrayHost, ...]) -> str:
        return f"{len(data)} host" + ("" if len(data) == 1 else "s")

    def watch(self, poke: Callable[[], None]) -> None:
        """pyudev's monitor thread calls :meth:`handle`; without one, a warning."""
        self._poke = poke
        if self._observer is not None:
            return
        try:
            import pyudev

            monitor = pyudev.Monitor.from_netlink(pyudev.Context())
            for subsystem in WATCHED_SUBSYSTEMS:
                monitor.filter_by(subsystem)
            observer = pyudev.MonitorObserver(monitor, name="udev", callback=lambda d: self.handle(
                UdevEvent(d.action or "", d.subsystem, d.device_type, d.sys_path)))
        except (ImportError, OSError) as error:
            log.warning("cannot watch udev events: %s; controllers appearing or going wait for "
                        "the next collection", error)
            return
        observer.daemon = True
        observer.start()
        self._observer = observer

    def close(self) -> None:
        if self._observer is not None:
            self._observer.send_stop()
            self._observer = None

    def handle(self, event: UdevEvent) -> None:
        """An early collection when the event concerns a Smart Array."""
        if self._poke is not None and concerns_smart_array(event, self._known):
            log.info("udev: %s %s; collecting early", event.action, event.sys_path)
            self._poke()


@dataclass(frozen=True)
class UdevEvent:
    action: str
    subsystem: str | None
    device_type: str | None
    sys_path: str


def concerns_smart_array(event: UdevEvent, known_functions: Collection[str]) -> bool:
    """A Smart Array host, its PCI function or a disk came or went: a PCI function on the
    path is one of the last collection's (a device that went cannot be read) or is bound to
    a Smart Array driver."""
    if event.action not in _APPEAR_OR_GO or event.subsystem not in WATCHED_SUBSYSTEMS:
        return False
    if event.subsystem == "block" and event.device_type != "disk":
        return False
    path = Path(event.sys_path)
    return any(_PCI_ADDRESS.match(directory.name) and (
        directory.name in known_functions or _driver_of(directory) in DRIVERS)
        for directory in (path, *path.parents))


def _driver_of(pci_dir: Path) -> str | None:
    try:
        return os.path.basename(os.readlink(pci_dir / "driver"))
    except OSError:
        return None


def _attribute(directory: Path, name: str) -> str | None:
    try:
        text = (directory / name).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None
