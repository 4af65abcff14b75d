"""A big host's answer costs the agent in proportion to its size (issue #50 items 1 and 2): the
work of parsing it, labelling its controllers and rendering them is counted (the Python lines
run), never timed; what is done in C (regular expressions, joins) is held to it by the shapes
below; the memory it takes is what tracemalloc counts. benchmarks/big_host_bench.py measures
both at the output cap."""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from smartarray_agent.collectors.base import Collector, CollectorResult
from smartarray_agent.collectors.ssacli.metrics import controller_ids
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.common.model import Snapshot
from smartarray_agent.daemon.loop import CollectionLoop
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import MetricSettings, render
from smartarray_agent.exporter.view import MetricsView
from smartarray_agent.simulator import vendor_argv

from .agent_process import AgentProcess
from .entries import ssacli_entries
from .test_notify import _until, listener  # noqa: F401 (a fixture)

SAME_SLOT = "Smart Array P410i in Slot 0 (Embedded)\n   Slot: 0\n   Controller Status: OK\n\n"


def same_slot(controllers: int) -> str:
    """What a host whose ``controllers`` controllers all print ``Slot: 0`` answers."""
    return "\n" + SAME_SLOT * controllers


class TooMuchWork(Exception):
    def __str__(self) -> str:
        return str(self.args[0])  # only the budget: a generator may add what it yielded


@contextmanager
def work(budget: int) -> Iterator[list[int]]:
    """Count the Python lines this thread runs inside; past ``budget`` the work stops with
    TooMuchWork, so that a cost that grows faster than the input fails at once."""
    lines = [0]

    def trace(frame, event, arg):  # noqa: ANN001, ANN202 (sys.settrace's protocol)
        if event == "line":
            lines[0] += 1
            if lines[0] > budget:
                raise TooMuchWork(f"more than {budget} lines")
        return trace

    sys.settrace(trace)
    try:
        yield lines
    finally:
        sys.settrace(None)


def test_4000_controllers_in_one_slot_are_labelled_in_work_linear_in_their_number():
    controllers = parse(same_slot(4000)).controllers
    with work(budget=20 * 4000):
        labels = controller_ids(controllers)
    assert labels == ["0", *(f"0#{n}" for n in range(2, 4001))]


def test_a_label_that_looks_like_a_suffix_keeps_every_label_unique():
    assert controller_ids(parse(
        "Smart Array A in Slot 0\n   Slot: 0\n\nSmart Array B in Slot 0#2\n   Slot: 0#2\n\n"
        "Smart Array C in Slot 0\n   Slot: 0\n\nSmart Array D in Slot 0#3\n   Slot: 0#3\n"
    ).controllers) == ["0", "0#2", "0#3", "0#3#2"]


def _page_of(text: str) -> bytes:
    result = CollectorResult("ssacli", True, 1.0, 0.0, parse(text))
    return render(ssacli_entries(result), now=0.0, settings=MetricSettings(None))


def test_parsing_and_rendering_1000_controllers_costs_8_times_125():
    with work(budget=10**9) as counted:
        _page_of(same_slot(125))
    with work(budget=8 * counted[0] * 11 // 10):  # 10% for what is done once
        page = _page_of(same_slot(1000))
    assert page.count(b"smartarray_controller_info{") == 1000


def test_the_daemon_with_4000_controllers_in_one_slot_is_ready_pings_and_serves_them(
    tmp_path, listener  # noqa: F811 (the fixture)
):
    address, receive = listener
    (tmp_path / "answer.txt").write_text(same_slot(4000))
    cli = tmp_path / "ssacli"
    cli.write_text(f"#!/bin/sh\n[ \"$*\" = 'ctrl all show config detail' ] || exit 9\n"
                   f"exec cat '{tmp_path}/answer.txt'\n")
    cli.chmod(0o755)
    agent = AgentProcess(tmp_path, f'[ssacli]\npath = "{cli}"\nlock_file = "{tmp_path}/lock"\n'
                                   "[sysfs]\nenabled = false\n",
                         env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "2000000"}).start()
    try:
        ready = _until(lambda: receive(timeout_s=300), lambda m: "READY" in m)[-1]
        assert ready["STATUS"].startswith("ssacli ok: 4000 controllers in ")
        assert _until(receive, lambda m: "WATCHDOG" in m)[-1] == {"WATCHDOG": "1"}
        info = [labels for (name, labels) in agent.samples()
                if name == "smartarray_controller_info"]
        assert len({dict(labels)["controller"] for labels in info}) == 4000
    finally:
        agent.kill()


# Shapes a CLI's answer can take that cost their length squared when a pattern is tried
# again from each character of a run, or a value is joined line by line: each is read as a
# short one is.
LONG = 1 << 18


@pytest.mark.parametrize(("line", "pair"), [
    (f"Model: HP{' ' * LONG}EG0300", ("Model", f"HP{' ' * LONG}EG0300")),
    (f"Note{' ' * LONG}x", None),
    (f"Key{' ' * LONG}: value", ("Key", "value")),
])
def test_a_long_run_of_spaces_in_a_line_is_read_as_a_short_one(line, pair):
    ctrl = parse(f"Smart Array P410i in Slot 0\n   Slot: 0\n   {line}\n").controllers[0]
    assert ctrl.raw == [("Slot", "0")] + ([pair] if pair else [])


def test_a_value_wrapped_over_many_lines_is_joined_once():
    lines = [f"part{n}" for n in range(LONG // 8)]
    text = ("Smart Array P410i in Slot 0\n   Slot: 0\n   Cache Status Details: start\n"
            + "".join(f"         {line}\n" for line in lines) + "   Controller Status: OK\n")
    ctrl = parse(text).controllers[0]
    assert ctrl.cache.status_details == " ".join(["start", *lines])
    assert ctrl.status == "ok"


def test_a_drive_printed_many_times_is_one_drive_with_every_pair():
    times = LONG // 16
    text = ("Smart Array P410i in Slot 0\n   Slot: 0\n\n"
            + "   physicaldrive 1I:1:1\n      Status: OK\n" * times)
    (drive,) = parse(text).controllers[0].physical_drives
    assert drive.raw == [("Status", "OK")] * times


@pytest.mark.parametrize(("key", "value", "field", "expected"), [
    ("Cache Ratio", f"{'1' * LONG}x 25% Read / 75% Write", "read_percent", 25),
    ("Cache Status", f"Failed{' ' * LONG}x (why)", "status", "failed_x"),
])
def test_a_long_run_of_digits_or_spaces_in_a_value_is_read_as_a_short_one(
    key, value, field, expected
):
    ctrl = parse(f"Smart Array P410i in Slot 0\n   Slot: 0\n   {key}: {value}\n").controllers[0]
    assert getattr(ctrl.cache, field) == expected


def test_a_long_drive_line_without_its_numbers_gives_no_place_and_no_progress():
    text = (f"Smart Array P410i in Slot 0\n   Slot: 0\n\n   physicaldrive 1I:1:1 "
            f"(port {'port ' * (LONG // 5)}, SAS, 300 GB, {'1' * LONG} Rebuilding)\n")
    (drive,) = parse(text).controllers[0].physical_drives
    assert drive.port is None
    assert (drive.status, drive.progress_percent) == ("1" * LONG + "_rebuilding", None)


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> str:
    """The simulator's ``large`` answer: 8 controllers, 24 drives each, about 150 kB."""
    return subprocess.run([*vendor_argv("large", tmp_path_factory.mktemp("sim")), "ctrl",
                           "all", "show", "config", "detail"], capture_output=True, text=True,
                          check=True).stdout


def test_a_big_answer_is_held_in_4_times_its_size_and_parsed_in_8(large):
    text = large * 14  # 2 MiB, 112 controllers, 2,688 drives
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        snapshot = parse(text)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(snapshot.controllers) == 112
    assert held - start <= 4 * len(text)
    assert peak - start <= 8 * len(text)


class _Remembering(Collector[Snapshot]):
    """Each collection a new snapshot; what it renders notes which earlier ones live on."""

    name, interval_s = "ssacli", None

    def __init__(self) -> None:
        self.made: list[weakref.ref[Snapshot]] = []
        self.alive_at_render: list[int] = []

    def collect(self) -> Snapshot:
        snapshot = Snapshot(notices=[f"round {len(self.made)}"])
        self.made.append(weakref.ref(snapshot))
        return snapshot

    def families(self, data: Snapshot, now: float) -> list:
        gc.collect()
        self.alive_at_render.append(sum(ref() is not None for ref in self.made[:-1]))
        return []

    def summary(self, data: Snapshot) -> str:
        return "a snapshot"


def test_a_round_renders_with_the_previous_snapshot_let_go():
    collector = _Remembering()
    loop = CollectionLoop([collector], MetricsView(MetricSettings(stale_after_s=None)),
                          Notifier(None), interval_s=0.05, debounce_s=0.05)
    loop.start()
    try:
        while loop.rounds < 3:
            loop.join(0.05)
    finally:
        loop.stop()
        assert loop.join(5)
    assert collector.alive_at_render[:3] == [0, 0, 0]


def test_the_ilo_charge_laid_over_a_big_snapshot_copies_what_it_changes_only(large):
    from smartarray_agent.collectors.redfish.merge import merge_charge

    from .test_redfish_merge import NOW, ilo_controller, reading

    snapshot = parse(large)
    backed = snapshot.controllers[0]
    merged = merge_charge(snapshot, reading(ilo_controller(serial=backed.serial)), NOW, 900)
    assert merged.controllers[0].backup_power.charge_percent == 93.0
    assert backed.backup_power.charge_percent is None  # the collected snapshot is not changed
    assert all(after.physical_drives is before.physical_drives and after.raw is before.raw
               for after, before in zip(merged.controllers, snapshot.controllers, strict=True))
