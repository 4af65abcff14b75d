"""A fake sysfs tree with the layout of the kernel's: PCI functions bound to drivers, SCSI
hosts under them (linked from class/scsi_host), a cciss board, and disks."""

from __future__ import annotations

from pathlib import Path

HPSA = "0000:03:00.0"  # Smart Array P440ar (hpsa)
HPSA_LOCKED = "0000:04:00.0"  # Smart Array P420 (hpsa) after a controller lockup
SMARTPQI = "0000:5c:00.0"  # Smart Array P408i-a SR Gen10 (smartpqi)
CCISS = "0000:06:00.0"  # Smart Array P400 (cciss)
AHCI = "0000:00:1f.2"  # the chipset's SATA controller: not a Smart Array


def build(root: Path) -> Path:
    bridge = root / "devices/pci0000:00/0000:00:02.0"
    _pci(root, bridge, "pcieport")
    _scsi_host(root, _pci(root, bridge / HPSA, "hpsa", device="0x3239", sub="0x21bd"), 0, {
        "firmware_revision": "7.00\n", "lockup_detected": "ld=0\n",
        "transport_mode": "performant\n", "commands_outstanding": "0\n",
    })
    _scsi_host(root, _pci(root, bridge / HPSA_LOCKED, "hpsa", device="0x323b", sub="0x3351"), 1, {
        "firmware_revision": "8.32\n", "lockup_detected": "ld=2147483649\n",
        "transport_mode": "performant\n",
    })
    _scsi_host(root, _pci(root, bridge / SMARTPQI, "smartpqi", vendor="0x9005",
                          device="0x028f", sub="0x0654"), 2, {
        "firmware_version": "1.98-0\n", "model": "P408i-a SR Gen10\n",
        "serial_number": "PEYHN0BRH9X1AB\n", "vendor": "HPE\n",
    })
    cciss = _pci(root, bridge / CCISS, "cciss", device="0x3230", sub="0x3234")
    (cciss / "cciss0").mkdir()
    (cciss / "cciss0" / "transport_mode").write_text("simple\n")
    _scsi_host(root, cciss, 3, {"proc_name": "cciss\n"})  # its tape host: fewer attributes
    _scsi_host(root, _pci(root, root / "devices/pci0000:00" / AHCI, "ahci"), 4, {})
    return root


def host_dirs(root: Path) -> list[Path]:
    """What udev would list: every SCSI host and ccissN device."""
    return [*sorted((root / "class/scsi_host").iterdir()),
            *sorted(root.glob("devices/**/cciss[0-9]*"))]


def disk_path(root: Path, function: str, host: int, name: str) -> Path:
    """A disk's sysfs path under the host ``host`` of PCI function ``function``."""
    pci = next(root.glob(f"devices/**/{function}"))
    return pci / f"host{host}/target{host}:0:0/{host}:0:0:0/block/{name}"


def _pci(root: Path, path: Path, driver: str, *, vendor: str = "0x103c",
         device: str = "0x0000", sub: str = "0x0000") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (("vendor", vendor), ("device", device), ("subsystem_device", sub),
                       ("subsystem_vendor", "0x103c" if vendor == "0x103c" else vendor)):
        (path / name).write_text(text + "\n")
    drivers = root / "bus/pci/drivers" / driver
    drivers.mkdir(parents=True, exist_ok=True)
    (path / "driver").symlink_to(drivers)
    return path


def _scsi_host(root: Path, pci: Path, number: int, attributes: dict[str, str]) -> None:
    host = pci / f"host{number}" / "scsi_host" / f"host{number}"
    host.mkdir(parents=True)
    for name, text in attributes.items():
        (host / name).write_text(text)
    links = root / "class/scsi_host"
    links.mkdir(parents=True, exist_ok=True)
    (links / f"host{number}").symlink_to(host)
