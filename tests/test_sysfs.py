"""The sysfs collector on a fake sysfs tree, udev events, and early collections they ask for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.sysfs import (
    SysfsCollector,
    UdevEvent,
    concerns_smart_array,
    read_host,
    udev_host_dirs,
)
from smartarray_agent.config import Overrides
from smartarray_agent.daemon.agent import Agent
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import MetricSettings, render

from . import fake_sysfs
from .agent_process import parse_samples, value
from .fake_sysfs import AHCI, CCISS, HPSA, HPSA_LOCKED, SMARTPQI
from .promtool import check_metrics, needs_promtool


@pytest.fixture
def sysfs(tmp_path) -> Path:
    return fake_sysfs.build(tmp_path / "sys")


def collect(sysfs: Path):
    return SysfsCollector(lambda: fake_sysfs.host_dirs(sysfs)).collect()


def test_every_smart_array_host_is_read_and_nothing_else(sysfs):
    hosts = {h.pci_address: h for h in collect(sysfs)}
    assert sorted(hosts) == [HPSA, HPSA_LOCKED, CCISS, SMARTPQI]
    hpsa = hosts[HPSA]
    assert (hpsa.host, hpsa.driver, hpsa.firmware) == ("host0", "hpsa", "7.00")
    assert (hpsa.vendor_id, hpsa.device_id, hpsa.subsystem_device_id) == (
        "0x103c", "0x3239", "0x21bd")
    assert hpsa.lockup_detected is False and hpsa.transport_mode == "performant"
    assert hosts[HPSA_LOCKED].lockup_detected is True
    pqi = hosts[SMARTPQI]
    assert (pqi.driver, pqi.firmware, pqi.model, pqi.serial) == (
        "smartpqi", "1.98-0", "P408i-a SR Gen10", "PEYHN0BRH9X1AB")
    assert pqi.lockup_detected is None and pqi.transport_mode is None


def test_a_cciss_board_is_one_host_the_one_with_more_attributes(sysfs):
    cciss = [h for h in collect(sysfs) if h.pci_address == CCISS]
    assert [(h.host, h.driver, h.transport_mode) for h in cciss] == [
        ("cciss0", "cciss", "simple")]


def test_a_host_that_went_between_listing_and_reading_is_skipped(sysfs):
    gone = sysfs / "devices/pci0000:00/0000:00:02.0/0000:09:00.0/host9/scsi_host/host9"
    assert read_host(gone) is None
    found = SysfsCollector(lambda: [gone, *fake_sysfs.host_dirs(sysfs)]).collect()
    assert len(found) == 4


def test_unreadable_values_are_unknown_not_guessed(sysfs):
    host = next(sysfs.glob(f"devices/**/{HPSA}/host0/scsi_host/host0"))
    (host / "lockup_detected").write_text("garbage\n")
    (host / "firmware_revision").write_text("\n")
    read = read_host(host)
    assert read is not None
    assert read.lockup_detected is None and read.firmware is None


def test_udev_discovery_runs_on_this_machine():
    assert all(isinstance(path, Path) for path in udev_host_dirs())


def test_host_metrics(sysfs):
    result = CollectorResult("sysfs", True, 0.01, 1_700_000_000.0, collect(sysfs))
    text = render([(SysfsCollector(), result)], now=1_700_000_001.0,
                  settings=MetricSettings(180)).decode()
    samples = parse_samples(text)
    assert value(samples, "smartarray_controller_lockup_detected", pci_address=HPSA) == 0
    assert value(samples, "smartarray_controller_lockup_detected", pci_address=HPSA_LOCKED) == 1
    assert value(samples, "smartarray_host_transport_mode", pci_address=CCISS,
                 state="simple") == 1
    assert value(samples, "smartarray_host_transport_mode", pci_address=SMARTPQI,
                 state="absent") == 1
    assert 'driver="smartpqi"' in text and 'serial="PEYHN0BRH9X1AB"' in text
    assert "smartarray_controller_lockup_detected{" + f'pci_address="{SMARTPQI}"' not in text


@needs_promtool
def test_host_metrics_pass_promtool(sysfs):
    result = CollectorResult("sysfs", True, 0.01, 1_700_000_000.0, collect(sysfs))
    check_metrics(render([(SysfsCollector(), result)], now=1_700_000_001.0,
                         settings=MetricSettings(180)))


@pytest.mark.parametrize(
    ("action", "subsystem", "device_type", "where", "known", "expected"),
    [
        ("add", "block", "disk", (HPSA, 0, "sdb"), set(), True),  # a disk appears
        ("remove", "block", "disk", (HPSA, 0, "sdb"), {HPSA}, True),  # ...and goes
        ("add", "block", "partition", (HPSA, 0, "sdb1"), set(), False),
        ("change", "block", "disk", (HPSA, 0, "sdb"), set(), False),
        ("add", "block", "disk", (AHCI, 4, "sdz"), set(), False),  # not a Smart Array disk
        ("add", "scsi_host", None, "host", set(), True),  # a controller appears
        ("unbind", "pci", None, "pci", {HPSA}, True),  # its driver lets go
        ("bind", "usb", None, "pci", set(), False),
    ],
)
def test_which_udev_events_concern_a_smart_array(
    sysfs, action, subsystem, device_type, where, known, expected
):
    if where == "host":
        path = next(sysfs.glob(f"devices/**/{SMARTPQI}/host2/scsi_host/host2"))
    elif where == "pci":
        path = next(sysfs.glob(f"devices/**/{HPSA}"))
    else:
        path = fake_sysfs.disk_path(sysfs, *where)
    event = UdevEvent(action, subsystem, device_type, str(path))
    assert concerns_smart_array(event, known) is expected


def test_a_disk_gone_from_an_unknown_function_is_ignored(sysfs):
    gone = "/sys/devices/pci0000:00/0000:00:02.0/0000:0a:00.0/host7/target7:0:0/7:0:0:0/block/sdq"
    assert not concerns_smart_array(UdevEvent("remove", "block", "disk", gone), {HPSA})
    assert concerns_smart_array(UdevEvent("remove", "block", "disk", gone), {"0000:0a:00.0"})


def test_udev_events_ask_for_one_debounced_early_collection(
    sysfs, tmp_path, caplog, monkeypatch
):
    caplog.set_level("INFO", logger="smartarray_agent.collectors.sysfs")
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path / "sim-state"))
    config = tmp_path / "agent.toml"
    config.write_text(f"""
[ssacli]
simulate = "gen9-battery"
lock_file = "{tmp_path}/cli.lock"
[collect]
interval_s = 3600
[sysfs]
udev_debounce_s = 0.3
""")
    agent = Agent(config, Overrides(listen_address="127.0.0.1:0"), Notifier(None))
    agent.start()
    try:
        _wait(lambda: agent.loop.rounds == 1)
        watcher = next(c for c in agent.loop.collectors if c.name == "sysfs")
        disk = fake_sysfs.disk_path(sysfs, AHCI, 4, "sdz")
        watcher.handle(UdevEvent("add", "block", "disk", str(disk)))  # not ours
        # Ignored on the spot: nothing asks the loop for an early round.
        assert agent.loop._debounce.due_at() is None
        assert "collecting early" not in caplog.text
        assert agent.loop.rounds == 1
        for n in range(20):  # a cage of disks appears
            disk = fake_sysfs.disk_path(sysfs, HPSA, 0, f"sd{chr(97 + n)}")
            watcher.handle(UdevEvent("add", "block", "disk", str(disk)))
        _wait(lambda: agent.loop.rounds == 2)
        # The round cleared the whole burst: no further early round is pending.
        assert agent.loop._debounce.due_at() is None
        assert agent.loop.rounds == 2  # one collection for the burst
        assert "udev: add " in caplog.text and "collecting early" in caplog.text
    finally:
        agent.stop()


def _wait(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
