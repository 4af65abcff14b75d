"""Scrapes go first (turns.py): collection work waits while the endpoint answers, never for
ever; the parser and the text writer give way between lines and samples; the endpoint says
when it answers and when it is idle again, and is idle once stopped."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from smartarray_agent import turns
from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.simulator import vendor_argv
from smartarray_agent.collectors.ssacli.collector import CONFIG_DETAIL
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.run import run_once
from smartarray_agent.collectors.ssacli.session import ConsoleSession
from smartarray_agent.exporter.http import ExporterServer
from smartarray_agent.exporter.render import MetricSettings, families
from smartarray_agent.exporter.textformat import exposition
from smartarray_agent.exporter.webconfig import WebSecurity

from .entries import ssacli_entries


@pytest.fixture(autouse=True)
def _idle_endpoint(monkeypatch):
    """Each test its own flag, idle, and restored after it."""
    idle = threading.Event()
    idle.set()
    monkeypatch.setattr(turns, "_idle", idle)
    monkeypatch.setattr(turns, "_work_until", 0.0)
    monkeypatch.setattr(turns, "_endpoint", None)


def in_thread(call) -> threading.Event:
    done = threading.Event()

    def run():
        call()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done


def test_give_way_returns_at_once_while_nothing_is_answered(monkeypatch):
    monkeypatch.setattr(turns, "MAX_WAIT_S", 600)
    assert in_thread(turns.give_way).wait(60)


def test_collection_work_waits_while_the_endpoint_answers_and_goes_on_when_it_is_idle(
        monkeypatch):
    monkeypatch.setattr(turns, "MAX_WAIT_S", 600)
    turns.answering()
    done = in_thread(turns.give_way)
    assert not done.wait(0.3), "gave way for no time while the endpoint was answering"
    turns.idle()
    assert done.wait(60)


def test_a_wait_is_bounded_and_then_the_work_goes_on_before_it_waits_again(monkeypatch):
    """Under scrapes that never stop, a collection slows down but is never starved."""
    monkeypatch.setattr(turns, "MAX_WAIT_S", 0.2)
    monkeypatch.setattr(turns, "WORK_S", 600)
    turns.answering()
    started = time.monotonic()
    assert in_thread(turns.give_way).wait(60)
    assert time.monotonic() - started >= 0.2
    monkeypatch.setattr(turns, "MAX_WAIT_S", 600)  # a second wait would hang the test
    assert in_thread(turns.give_way).wait(60), "waited again before working WORK_S"


def test_the_endpoint_never_waits_for_itself(monkeypatch):
    """A scrape that finds the exposition out of date renders it on the endpoint's thread,
    through the same give_way calls: they must not wait for the endpoint, that thread."""
    monkeypatch.setattr(turns, "MAX_WAIT_S", 600)

    rendered, finish = threading.Event(), threading.Event()

    def render_for_a_scrape():
        turns.answering()
        turns.give_way()
        rendered.set()
        finish.wait(60)  # alive, so that no other thread gets its identity

    in_thread(render_for_a_scrape)
    try:
        assert rendered.wait(60)
        assert not in_thread(turns.give_way).wait(0.3), "another thread should still wait"
    finally:
        finish.set()


def test_a_scrape_that_renders_on_the_endpoint_s_thread_is_answered(monkeypatch):
    monkeypatch.setattr(turns, "MAX_WAIT_S", 60)  # waiting for itself: no answer in 30 s

    def body(compressed: bool) -> bytes:  # as MetricsView.body when its data has expired
        turns.give_way()
        return b"m 1\n"

    server = ExporterServer(("127.0.0.1", 0), body, WebSecurity())
    server.start()
    try:
        with urllib.request.urlopen(server.url + "metrics", timeout=30) as answer:
            assert answer.read() == b"m 1\n"
    finally:
        server.stop()


@pytest.mark.parametrize("console", [False, True])
def test_no_vendor_process_is_started_while_the_endpoint_answers(monkeypatch, tmp_path, console):
    """Starting a process holds the GIL for milliseconds (a fork of the agent): it waits."""
    monkeypatch.setattr(turns, "MAX_WAIT_S", 600)
    started = tmp_path / "started"
    code = f"open({str(started)!r}, 'w').close()"
    if console:
        code += "; print('=> ', end='', flush=True); input()"  # a console's first prompt
    cli = VendorCli((sys.executable, "-c", code), "simulator")
    if console:
        session = ConsoleSession(cli, start_timeout_s=30, command_timeout_s=30)
        start = session.start
    else:
        def start():
            run_once(cli, ["ctrl", "all", "show"], timeout_s=30)
    turns.answering()  # this thread plays the endpoint, answering a burst
    done = in_thread(start)
    try:
        assert not done.wait(0.5) and not started.exists()
        turns.idle()
        assert done.wait(60) and started.exists()
    finally:
        turns.idle()
        if console:
            session.close()


class _CountingIdle:
    """Stands for the endpoint's idle flag: always idle, and counts who asked."""

    def __init__(self) -> None:
        self.asked = 0

    def is_set(self) -> bool:
        self.asked += 1
        return True


def test_the_parser_and_the_text_writer_give_way_between_lines_and_samples(
        monkeypatch, tmp_path):
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path))
    text = run_once(VendorCli(tuple(vendor_argv("large")), "simulator"), CONFIG_DETAIL).output
    counter = _CountingIdle()
    monkeypatch.setattr(turns, "_idle", counter)
    snapshot = parse(text)
    assert counter.asked >= 2 * len(text.splitlines())  # cleaned, then scanned
    result = CollectorResult("ssacli", True, 1.0, 1_700_000_000.0, snapshot)
    metrics = families(ssacli_entries(result), now=1_700_000_001.0,
                       settings=MetricSettings(None))
    counter.asked = 0
    exposition(metrics)
    assert counter.asked == sum(len(metric.samples) for metric in metrics) > 3000


def test_the_endpoint_answers_then_is_idle_and_is_idle_once_stopped(monkeypatch):
    said: list[str] = []
    idle_again = threading.Event()

    def answering():
        said.append("answering")
        turns._idle.clear()

    def idle():
        said.append("idle")
        turns._idle.set()
        idle_again.set()

    monkeypatch.setattr(turns, "answering", answering)
    monkeypatch.setattr(turns, "idle", idle)
    server = ExporterServer(("127.0.0.1", 0), lambda compressed: b"m 1\n", WebSecurity())
    server.start()
    try:
        with urllib.request.urlopen(server.url + "metrics", timeout=30) as answer:
            assert answer.read() == b"m 1\n"
        assert idle_again.wait(30)
        assert said[:2] == ["answering", "idle"]
        idle_again.clear()
        turns.answering()  # as if stopped in the middle of a burst
    finally:
        server.stop()
    assert idle_again.is_set() and turns._idle.is_set()


def test_run_s_interpreter_switches_threads_within_10_us_and_freezes_what_it_holds():
    """What tune_interpreter leaves (in a process of its own: it would freeze this one)."""
    probe = ("import gc, sys; from smartarray_agent import turns; turns.tune_interpreter(); "
             "print(sys.getswitchinterval(), gc.get_freeze_count(), gc.isenabled())")
    printed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()
    assert float(printed[0]) == pytest.approx(1e-5)
    assert int(printed[1]) > 1000  # the modules, classes and functions imported so far
    assert printed[2] == "True"  # the collector still runs, over what is made from now on
