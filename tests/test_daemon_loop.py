"""The collection loop and its debounce, in-process, with the sysfs collector on a fake tree."""

from __future__ import annotations

import time

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.daemon.debounce import Debounce
from smartarray_agent.daemon.loop import CollectionLoop, status_line
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import MetricSettings
from smartarray_agent.exporter.view import MetricsView

from . import fake_sysfs
from .entries import ssacli


def test_debounce_fires_after_the_last_event_but_not_later_than_the_cap():
    debounce = Debounce(delay_s=2, max_delay_s=5)
    assert debounce.due_at() is None
    debounce.poke(100)
    assert debounce.due_at() == 102
    debounce.poke(101.5)
    assert debounce.due_at() == 103.5
    for now in (102.5, 103.5, 104.5):
        debounce.poke(now)
    assert debounce.due_at() == 105  # a steady stream still gets its collection
    debounce.clear()
    assert debounce.due_at() is None


def test_status_line():
    entries = [
        (ssacli(), CollectorResult("ssacli", True, 1.234, 1.0, Snapshot(controllers=[
            Controller(model="A"), Controller(model="B")]))),
        (SysfsCollector(), CollectorResult("sysfs", False, 0.0, None, None,
                                           "cannot list devices")),
    ]
    assert status_line(entries) == (
        "ssacli ok: 2 controllers in 1.2 s; sysfs failed: cannot list devices")


def _wait(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_loop_collects_on_schedule_and_reconfigures_between_rounds(tmp_path):
    sysfs = fake_sysfs.build(tmp_path / "sys")
    view = MetricsView(MetricSettings(stale_after_s=None))
    first = SysfsCollector(lambda: fake_sysfs.host_dirs(sysfs))
    loop = CollectionLoop([first], view, Notifier(None), interval_s=0.2, debounce_s=0.1)
    loop.start()
    try:
        _wait(lambda: loop.rounds >= 3)  # on its own schedule
        assert b'smartarray_host_info{' in view.body()
        empty = SysfsCollector(lambda: [])
        loop.reconfigure([empty], interval_s=3600, debounce_s=0.1)
        rounds = loop.rounds
        _wait(lambda: b"smartarray_host_info{" not in view.body())
        assert loop.rounds == rounds + 1  # collected at once with the new collector...
        time.sleep(0.5)
        assert loop.rounds == rounds + 1  # ...then waits the new interval
        loop.poke()
        _wait(lambda: loop.rounds == rounds + 2)
    finally:
        loop.stop()
        assert loop.join(5)
