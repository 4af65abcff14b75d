"""``/probe?target=HOST[:PORT]&module=NAME``: a (fake) iLO over real HTTPS, read through
the endpoint (aiohttp), rendered under the local agent's names and labels, and bounded:
allow-list, timeout, one login per interval, a cap on sessions."""

from __future__ import annotations

import asyncio
import base64
import http.client
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bcrypt
import pytest
from prometheus_client.parser import text_string_to_metric_families

from smartarray_agent.collectors.ssacli.metrics import HELP
from smartarray_agent.common.model import Cache, Controller, Snapshot
from smartarray_agent.exporter.auth import BasicAuth
from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity
from smartarray_agent.probe import prober as prober_module
from smartarray_agent.probe.prober import Prober
from smartarray_agent.probe.settings import ProbeConfig

from .agent_cli import agent as run_agent
from .redfish_ilo import (
    CHASSIS,
    ILO5_CONTROLLER,
    ILO5_TREE,
    PASSWORD,
    Ilo,
    certificate,
    closed_port,
    credentials_file,
    serve,
    tree,
)

WRONG_PASSWORD = "not-the-Pa55word-either"
POWER_ON = "smartarray_physical_drive_power_on_seconds"


def probe_config(tmp_path: Path, targets: list[str], password: str = PASSWORD,
                 **bounds: object) -> ProbeConfig:
    module = {"credentials_file": str(credentials_file(tmp_path, password)),
              "ca_file": str(certificate()[0]), "connect_timeout_s": 5, "read_timeout_s": 5}
    return ProbeConfig.model_validate({"targets": targets, "modules": {"default": module},
                                       **bounds})


@contextmanager
def endpoint(prober: Prober, security: WebSecurity | None = None) -> Iterator[ExporterServer]:
    server = ExporterServer(("127.0.0.1", 0), lambda compressed: b"local 1\n",
                            security or WebSecurity())
    server.prober = prober
    server.start()
    try:
        yield server
    finally:
        prober.close()
        server.stop()


class Loop:
    """An event loop on a thread of its own, as the endpoint runs one: ``start`` hands it a
    coroutine and returns at once, ``run`` waits for its result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def start(self, coroutine: Coroutine[Any, Any, Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return self.start(coroutine).result(30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


@pytest.fixture
def on_loop() -> Iterator[Loop]:
    loop = Loop()
    try:
        yield loop
    finally:
        loop.close()


def probe(loop: Loop, prober: Prober, query: str, timeout: str | None = None) -> str:
    """The page a probe is answered with (a 200)."""
    answer = loop.run(prober.respond(query, timeout))
    assert answer.status == 200
    return answer.body.decode()


def read_ended(prober: Prober, address: str) -> None:
    """Wait for the read of ``address`` under way (if any) to end, on the loop it runs on."""
    task = prober._targets[(address, "default")].reading
    if task is not None:
        asyncio.run_coroutine_threadsafe(asyncio.wait([task]), task.get_loop()).result(30)


def reading(prober: Prober, address: str) -> bool:
    """Whether a read of ``address`` is waiting for a session or under way."""
    target = prober._targets.get((address, "default"))
    return target is not None and target.reading is not None


def waiting_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def get(server: ExporterServer, query: str,
        headers: dict[str, str] | None = None) -> tuple[int, str]:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    try:
        connection.request("GET", f"/probe?{query}", headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def samples(page: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(page) for s in family.samples}


def value(page: str, name: str) -> float:
    return samples(page)[(name, ())]


def without_age(page: str) -> str:
    """``page`` without its snapshot age, which grows between two answers of one read."""
    return "\n".join(line for line in page.splitlines()
                     if "smartarray_probe_snapshot_age_seconds" not in line)


def local_page(tmp_path: Path, scenario: str = "gen10") -> str:
    """The local agent's page for a simulator scenario's host (gen10: the host the iLO 5
    tree describes)."""
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")}
    result = run_agent("metrics", "--once", "--simulate", scenario,
                       "--lock-file", str(tmp_path / "cli.lock"), env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_probe_has_the_local_agents_names_and_labels(tmp_path):
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)) as server:
        status, page = get(server, f"target={ilo.address}&module=default")
    assert status == 200
    assert value(page, "smartarray_probe_success") == 1.0
    assert 0 < value(page, "smartarray_probe_duration_seconds") < 30
    probed = samples(page)
    local = samples(local_page(tmp_path))
    # every family the probe renders is one the local agent renders (docs/metrics.md), and
    # where both pages have it, its label names are the same
    local_labels = {name: {key for key, _ in labels} for name, labels in local}
    for name, labels in probed:
        if name.startswith("smartarray_probe_"):
            continue
        assert name in HELP, name
        if name in local_labels:
            assert {key for key, _ in labels} == local_labels[name], name
    # the facts both know: the same series, the same values
    for name in ("smartarray_controller_status", "smartarray_cache_status",
                 "smartarray_cache_ratio", "smartarray_cache_size_bytes",
                 "smartarray_backup_power_status", "smartarray_unprotected_write_cache",
                 "smartarray_write_cache_active", "smartarray_no_battery_write_cache_enabled",
                 "smartarray_logical_drive_status"):
        theirs = {key: v for key, v in local.items() if key[0] == name}
        ours = {key: v for key, v in probed.items() if key[0] == name}
        assert ours and ours == theirs, name
    assert probed[("smartarray_backup_power_charge_ratio", (("controller", "0"),))] == 0.99
    assert ilo.logins == ilo.logouts and len(ilo.logins) == 1


def test_a_target_off_the_allow_list_is_refused_before_any_connection(tmp_path):
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["ilo-*.example.net", "10.1.2.3:443"]),
                   80.0)) as server:
        port = ilo.address.rsplit(":", 1)[1]
        refused = [get(server, query) for query in (
            f"target={ilo.address}", f"target=localhost:{port}", f"target=LOCALHOST:{port}",
            f"target=10.1.2.3:{port}", f"target=[::1]:{port}")]
        malformed = [get(server, query) for query in (
            "", f"target=monitor:x@{ilo.address}", f"target={ilo.address}/redfish",
            f"target=https://{ilo.address}", "target=ilo-1.example.net&module=nope",
            "target=ilo-1.example.net&target=ilo-2.example.net",
            "target=ilo-1.example.net:99999", "target=%00")]
    assert [status for status, _ in refused] == [403] * 5
    assert "is not in [probe] targets" in refused[0][1]
    assert [status for status, _ in malformed] == [400] * 8, malformed
    assert ilo.connections == 0 and not ilo.requests


def test_an_address_pattern_admits_addresses_and_a_name_pattern_names(tmp_path):
    """A name that starts like an admitted address is not one (issue #39 item 1), an address
    is not a name, and a number that the resolver would take for an address is neither."""
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.0/24:*", "ilo-*.example.net:*",
                                           "*ff*:*"]), 80.0)) as server:
        port = ilo.address.rsplit(":", 1)[1]
        admitted = get(server, f"target={ilo.address}")
        refused = [get(server, query) for query in (
            f"target=127.0.0.1.evil.test:{port}", f"target=127.0.1.1:{port}",
            f"target=[::ffff:127.0.0.1]:{port}", f"target=localhost:{port}")]
        malformed = [get(server, query) for query in (
            f"target=2130706433:{port}", f"target=127.1:{port}", f"target=0x7f.0.0.1:{port}",
            f"target=0177.0.0.1:{port}", f"target=[127.0.0.1]:{port}")]
    assert admitted[0] == 200 and value(admitted[1], "smartarray_probe_success") == 1.0
    assert [status for status, _ in refused] == [403] * 4, refused
    assert [status for status, _ in malformed] == [400] * 5, malformed
    assert "not an address" in malformed[0][1]
    assert len(ilo.logins) == 1


def test_a_number_out_of_range_poisons_no_target(tmp_path):
    """A 400-digit CapacityMiB (and PowerOnHours) is no size the exposition can render: it
    is unknown, and every probe of the target is answered (issue #39 item 3; before, the
    rendering raised OverflowError on the loop and the connection closed unanswered)."""
    documents = tree(ILO5_TREE)
    huge = 10**400
    documents[ILO5_CONTROLLER + "LogicalDrives/1/"]["CapacityMiB"] = huge
    documents[ILO5_CONTROLLER + "DiskDrives/0/"].update(CapacityMiB=huge, PowerOnHours=huge,
                                                        CurrentTemperatureCelsius=huge)
    with serve(Ilo(documents)) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)) as server:
        answers = [get(server, f"target={ilo.address}") for _ in range(3)]
    assert [status for status, _ in answers] == [200] * 3
    for _, page in answers:
        assert value(page, "smartarray_probe_success") == 1.0
        found = samples(page)
        # the drives whose numbers are out of range have no size; the others keep theirs
        sizes = [size for (name, _), size in found.items() if name.endswith("_size_bytes")
                 and "drive" in name]
        assert sorted(sizes) == [915715 * 2**20] * 3
        hours = [h for (name, _), h in found.items() if name.startswith(POWER_ON)]
        assert hours == [21840 * 3600.0] * 2
        temperatures = [name for (name, _) in found
                        if name == "smartarray_physical_drive_temperature_celsius"]
        assert len(temperatures) == 3
    assert len(ilo.logins) == 1


def test_a_read_that_cannot_be_rendered_is_a_failed_probe(tmp_path, caplog):
    """Whatever slips past the model's bounds (here a snapshot built without them), a read
    that cannot be rendered is answered as a failed one, not an exception on the loop
    (issue #39 item 3)."""
    poisoned = Snapshot.model_construct(controllers=[Controller.model_construct(
        **{**Controller(model="P408i-a").__dict__, "cache": Cache.model_construct(
            **{**Cache().__dict__, "size_bytes": 10**400})})])
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)
    try:
        answer = prober.answer(poisoned, 1.5, 3.0)
    finally:
        prober.close()
    assert answer.status == 200
    page = answer.body.decode()
    assert value(page, "smartarray_probe_success") == 0.0
    assert value(page, "smartarray_probe_duration_seconds") == 1.5
    assert "could not be rendered" in caplog.text


def test_a_wrong_password_is_a_failed_probe_that_names_no_secret(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    config = probe_config(tmp_path, ["127.0.0.1:*"], password=WRONG_PASSWORD)
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(Prober(config, 80.0)) as server:
        status, page = get(server, f"target={ilo.address}")
        again = get(server, f"target={ilo.address}")
    assert status == 200
    assert value(page, "smartarray_probe_success") == 0.0
    assert not [name for name, _ in samples(page) if not name.startswith("smartarray_probe_")]
    # within min_interval_s the failure is the answer: the iLO account is not hammered
    assert again[0] == 200 and without_age(again[1]) == without_age(page)
    assert [method for method, _, _ in ilo.requests] == ["POST"] and not ilo.logins
    assert "login refused (HTTP 401)" in caplog.text
    for secret in (WRONG_PASSWORD, PASSWORD):
        assert secret not in page and secret not in caplog.text


def test_tls_is_verified_by_default(tmp_path, caplog):
    module = {"credentials_file": str(credentials_file(tmp_path))}  # no ca_file: the system's
    config = ProbeConfig.model_validate({"targets": ["127.0.0.1:*"],
                                         "modules": {"default": module}})
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(Prober(config, 80.0)) as server:
        status, page = get(server, f"target={ilo.address}")
    assert status == 200 and value(page, "smartarray_probe_success") == 0.0
    assert "TLS certificate not trusted" in caplog.text
    assert not ilo.requests and not ilo.logins  # nothing was sent, the password least of all


def test_a_hung_ilo_is_answered_within_the_probe_timeout(tmp_path):
    """The answer comes while the read still hangs: the probe's time, not the iLO's."""
    config = probe_config(tmp_path, ["127.0.0.1:*"], timeout_s=1)
    prober = Prober(config, 80.0)
    with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as ilo, endpoint(prober) as server:
        status, page = get(server, f"target={ilo.address}")
        assert ilo.hanging.is_set() and reading(prober, ilo.address)
    assert status == 200 and value(page, "smartarray_probe_success") == 0.0
    assert value(page, "smartarray_probe_duration_seconds") == 1.0  # timeout_s


def test_a_slow_ilo_s_session_ends_at_the_refresh_timeout(tmp_path, on_loop):
    """Every document answers in 0.3 s: the whole read would take about 5 s, but no request
    starts after the read's 1 s, and the session is logged out then."""
    documents = tree(ILO5_TREE)
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"], timeout_s=1,
                                 refresh_timeout_s=1), 80.0)
    try:
        with serve(Ilo(documents, delay_s=dict.fromkeys(documents, 0.3))) as ilo:
            probe(on_loop, prober, f"target={ilo.address}")
            read_ended(prober, ilo.address)
            gets = [path for method, path, _ in ilo.requests if method == "GET"]
            page = probe(on_loop, prober, f"target={ilo.address}")  # the read's own end
    finally:
        prober.close()
    assert value(page, "smartarray_probe_success") == 0.0
    assert 1 <= len(gets) <= 4, gets
    assert len(documents) > 10 and ilo.logouts == ilo.logins


def test_prometheus_scrape_timeout_shortens_the_probe_timeout(tmp_path):
    config = probe_config(tmp_path, ["127.0.0.1:*"], timeout_s=60)
    prober = Prober(config, 80.0)
    with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as ilo, endpoint(prober) as server:
        status, page = get(server, f"target={ilo.address}",
                           {"X-Prometheus-Scrape-Timeout-Seconds": "1.5"})
        assert reading(prober, ilo.address)  # answered while the read hangs
    assert status == 200 and value(page, "smartarray_probe_success") == 0.0
    assert value(page, "smartarray_probe_duration_seconds") == 1.0  # 1.5 s less the margin


def test_a_target_is_logged_in_to_once_per_min_interval(tmp_path):
    now = [1000.0]
    config = probe_config(tmp_path, ["127.0.0.1:*"], min_interval_s=60)
    prober = Prober(config, 80.0, clock=lambda: now[0])
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(prober) as server:
        first = get(server, f"target={ilo.address}")
        now[0] += 59.9
        second = get(server, f"target={ilo.address}&module=default")
        assert len(ilo.logins) == 1
        now[0] += 0.1
        third = get(server, f"target={ilo.address}")  # from the last read; a new one starts
        assert reading(prober, ilo.address)
        read_ended(prober, ilo.address)
    assert without_age(first[1]) == without_age(second[1])  # the same read, duration and all
    assert value(first[1], "smartarray_probe_snapshot_age_seconds") == 0.0
    assert value(second[1], "smartarray_probe_snapshot_age_seconds") == 59.9
    assert value(third[1], "smartarray_probe_success") == 1.0
    assert len(ilo.logins) == 2 and ilo.logins == ilo.logouts


def test_no_more_ilo_sessions_than_max_sessions(tmp_path):
    config = probe_config(tmp_path, ["127.0.0.1:*"], max_sessions=1, timeout_s=3)
    prober = Prober(config, 80.0)
    with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as slow, \
            serve(Ilo(tree(ILO5_TREE))) as other, endpoint(prober) as server:
        blocked = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
        blocked.request("GET", f"/probe?target={slow.address}")
        assert slow.hanging.wait(10)  # the one session is taken
        status, page = get(server, f"target={other.address}",
                           {"X-Prometheus-Scrape-Timeout-Seconds": "1"})
        assert other.connections == 0  # its read waits for the one session
        slow.release.set()
        first = blocked.getresponse()
        assert first.status == 200
        assert value(first.read().decode(), "smartarray_probe_success") == 0.0
        blocked.close()
        read_ended(prober, other.address)  # it ran once the session was free
        later = get(server, f"target={other.address}")  # and is the next probe's answer
    assert status == 200 and value(page, "smartarray_probe_success") == 0.0
    assert value(later[1], "smartarray_probe_success") == 1.0
    assert len(other.logins) == 1


def test_reads_waiting_for_a_session_are_bounded(tmp_path, on_loop, monkeypatch):
    monkeypatch.setattr(prober_module, "MAX_WAITING", 4)
    config = probe_config(tmp_path, ["127.0.0.1:*"], max_sessions=1, timeout_s=10)
    prober = Prober(config, 80.0)
    ports = [closed_port() for _ in range(4)]  # never reached: they wait
    try:
        with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as slow:
            under_way = [on_loop.start(prober.respond(f"target={slow.address}"))]
            assert slow.hanging.wait(10)
            under_way += [on_loop.start(prober.respond(f"target={port}")) for port in ports[1:]]
            waiting_for(lambda: all(reading(prober, port) for port in ports[1:]))
            refused = probe(on_loop, prober, f"target={ports[0]}")  # at once, no read
            assert not reading(prober, ports[0])
            assert value(refused, "smartarray_probe_success") == 0.0
            slow.release.set()
            for pending in under_way:
                assert pending.result(30).status == 200
        again = probe(on_loop, prober, f"target={ports[0]}")  # room again: it is tried
        assert value(again, "smartarray_probe_success") == 0.0
        assert prober._targets[(ports[0], "default")].login_started is not None
    finally:
        prober.close()


def test_a_full_waiting_line_is_logged_once_a_minute_not_once_a_probe(tmp_path, caplog,
                                                                        on_loop, monkeypatch):
    monkeypatch.setattr(prober_module, "MAX_WAITING", 2)
    clock = [1000.0]
    config = probe_config(tmp_path, ["127.0.0.1:*"], max_sessions=1, timeout_s=10)
    prober = Prober(config, 80.0, clock=lambda: clock[0])
    try:
        with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as slow:
            first = on_loop.start(prober.respond(f"target={slow.address}"))
            assert slow.hanging.wait(10)
            waiting = closed_port()
            second = on_loop.start(prober.respond(f"target={waiting}"))
            waiting_for(lambda: reading(prober, waiting))
            for port in [closed_port() for _ in range(6)]:  # the line is full: 6 refused
                probe(on_loop, prober, f"target={port}")
            full = [r.getMessage() for r in caplog.records if "no read of" in r.getMessage()]
            assert len(full) == 1, full
            clock[0] += 61  # a minute on: the next refusal is logged, with the count
            probe(on_loop, prober, f"target={closed_port()}")
            full = [r.getMessage() for r in caplog.records if "no read of" in r.getMessage()]
            assert len(full) == 2 and "5 more refused since" in full[1], full
            slow.release.set()
            first.result(30)
            second.result(30)
    finally:
        prober.close()


def test_a_read_longer_than_the_scrape_timeout_answers_the_next_probe(tmp_path, on_loop):
    """Every document answers in 0.3 s, the whole read in about 4 s, past the first probe's
    1 s: that probe fails, but the read goes on to its end (issue #27 item 4: iLOs answering
    in 1-3 s a request never fit a scrape timeout), and the next probe is answered from it
    at once, without a second login."""
    documents = tree(ILO5_TREE)
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)
    try:
        with serve(Ilo(documents, delay_s=dict.fromkeys(documents, 0.3))) as ilo:
            late = probe(on_loop, prober, f"target={ilo.address}", "1.5")
            assert reading(prober, ilo.address)  # the read goes on
            read_ended(prober, ilo.address)
            page = probe(on_loop, prober, f"target={ilo.address}", "1.5")
    finally:
        prober.close()
    assert value(late, "smartarray_probe_success") == 0.0
    assert value(late, "smartarray_probe_duration_seconds") == 1.0  # the probe's own time
    assert value(page, "smartarray_probe_success") == 1.0
    assert value(page, "smartarray_probe_duration_seconds") > 1.5
    assert value(page, "smartarray_probe_snapshot_age_seconds") >= 0.0
    assert ("smartarray_cache_status", (("controller", "0"), ("state", "ok"))) in samples(page)
    assert len(ilo.logins) == 1 and ilo.logouts == ilo.logins


def test_after_min_interval_a_probe_is_answered_at_once_while_the_target_is_read_again(
        tmp_path, on_loop):
    """The second read hangs: probes meanwhile get the first read's answer, with its age,
    at once and log in no more; when it ends, the next probe is answered from it."""
    now = [1000.0]
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"], min_interval_s=60), 80.0,
                    clock=lambda: now[0])
    try:
        with serve(Ilo(tree(ILO5_TREE))) as ilo:
            first = probe(on_loop, prober, f"target={ilo.address}")
            ilo.hang.add(CHASSIS)
            now[0] += 60
            during = [probe(on_loop, prober, f"target={ilo.address}")]
            assert ilo.hanging.wait(10)  # the second read is under way
            now[0] += 5
            during.append(probe(on_loop, prober, f"target={ilo.address}"))
            assert reading(prober, ilo.address)
            ilo.status[CHASSIS] = 500  # aiohttp asks once more on a new connection: refused
            ilo.hang.clear()
            ilo.release.set()
            read_ended(prober, ilo.address)
            now[0] += 1
            after = probe(on_loop, prober, f"target={ilo.address}")
    finally:
        prober.close()
    assert value(first, "smartarray_probe_success") == 1.0
    assert [value(page, "smartarray_probe_success") for page in during] == [1.0, 1.0]
    assert [value(page, "smartarray_probe_snapshot_age_seconds") for page in during] == [60, 65]
    assert len(ilo.logins) == 2
    # the hung read failed when released: the last read says so, one second old
    assert value(after, "smartarray_probe_success") == 0.0
    assert value(after, "smartarray_probe_snapshot_age_seconds") == 1.0


def test_a_target_no_probe_asked_about_for_an_hour_is_forgotten(tmp_path, on_loop):
    now = [1000.0]
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0, clock=lambda: now[0])
    try:
        with serve(Ilo(tree(ILO5_TREE))) as ilo:
            probe(on_loop, prober, f"target={ilo.address}")
            now[0] += 3599  # another target's first probe looks for old ones
            probe(on_loop, prober, f"target={closed_port()}")
            assert (ilo.address, "default") in prober._targets
            now[0] += 1
            probe(on_loop, prober, f"target={closed_port()}")
            assert (ilo.address, "default") not in prober._targets
            again = probe(on_loop, prober, f"target={ilo.address}")  # a first probe again
    finally:
        prober.close()
    assert value(again, "smartarray_probe_snapshot_age_seconds") == 0.0
    assert len(ilo.logins) == 2


def test_basic_auth_guards_probes_and_a_verified_one_is_answered_in_turn(tmp_path):
    """The web config's login comes first (no credentials: 401, the iLO untouched); after
    a bcrypt check, the probe is answered off the loop, and a request pipelined behind it
    on the same connection is answered after it."""
    users = {"prometheus": bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()}
    login = "Basic " + base64.b64encode(b"prometheus:s3cret").decode()
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0),
            WebSecurity(auth=BasicAuth(users))) as server:
        assert get(server, f"target={ilo.address}")[0] == 401
        assert ilo.connections == 0
        with socket.create_connection(server.server_address[:2], timeout=30) as sock:
            head = f"Host: agent\r\nAuthorization: {login}\r\n"
            sock.sendall(f"GET /probe?target={ilo.address} HTTP/1.1\r\n{head}\r\n"
                         f"GET /metrics HTTP/1.1\r\n{head}Connection: close\r\n\r\n"
                         .encode())
            received = b"".join(iter(lambda: sock.recv(65536), b""))
    probed, metrics = received.split(b"HTTP/1.1 ")[1:]
    assert probed.startswith(b"200 ") and metrics.startswith(b"200 ")
    assert b"smartarray_probe_success 1.0" in probed
    assert metrics.endswith(b"\r\n\r\nlocal 1\n")
    assert len(ilo.logins) == 1


def test_without_a_probe_table_there_is_no_probe(tmp_path):
    server = ExporterServer(("127.0.0.1", 0), lambda compressed: b"local 1\n", WebSecurity())
    server.start()
    try:
        assert get(server, "target=127.0.0.1")[0] == 404
    finally:
        server.stop()


def test_serve_answers_probes_with_the_unit_s_credentials_and_reloads_the_allow_list(tmp_path):
    """The unprivileged ``serve`` answers /probe; the module's credentials file comes from
    systemd's credentials directory when the unit loads it there (the named file holds a
    wrong password here: only the loaded one works); SIGHUP applies a new allow-list."""
    etc, loaded = tmp_path / "etc", tmp_path / "credentials"
    etc.mkdir()
    loaded.mkdir()
    credentials_file(etc, WRONG_PASSWORD)
    credentials_file(loaded)
    published = tmp_path / "published"
    published.mkdir(mode=0o750)
    config = etc / "config.toml"

    def write(targets: str) -> None:
        config.write_text(f'[web]\npublish_dir = "{published}"\n[probe]\ntargets = [{targets}]\n'
                          '[probe.modules.default]\ncredentials_file = "ilo-credentials.toml"\n'
                          f'ca_file = "{certificate()[0]}"\n')

    write('"127.0.0.1:*"')
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
         "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CREDENTIALS_DIRECTORY": str(loaded)})
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert "serving" in first, first + process.stderr.read()
        host, port = first.rsplit("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)
        with serve(Ilo(tree(ILO5_TREE))) as ilo:
            def probe() -> tuple[int, str]:
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
                connection.request("GET", f"/probe?target={ilo.address}")
                answer = connection.getresponse()
                result = answer.status, answer.read().decode()
                connection.close()
                return result

            status, page = probe()
            assert status == 200 and value(page, "smartarray_probe_success") == 1.0
            assert ("smartarray_cache_status", (("controller", "0"), ("state", "ok"))) in \
                samples(page)
            write('"ilo-*.example.net"')
            process.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 30
            while (refused := probe())[0] != 403:  # the reload is done when it answers so
                assert time.monotonic() < deadline, refused
            assert len(ilo.logins) == 1
    finally:
        process.terminate()
        process.wait(30)


def test_a_prober_closed_by_a_reload_fails_its_last_probes_without_raising(tmp_path, on_loop):
    """A probe waiting for its read when a reload closes the prober gets a failed answer,
    and a read of a closed prober is never started; the read under way still logs out."""
    prober = Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)
    with serve(Ilo(tree(ILO5_TREE), hang={CHASSIS})) as ilo:
        waiting = on_loop.start(prober.respond(f"target={ilo.address}"))
        assert ilo.hanging.wait(10)
        prober.close()
        answer = waiting.result(30)
        ilo.release.set()
        waiting_for(lambda: bool(ilo.logouts))
    assert value(answer.body.decode(), "smartarray_probe_success") == 0.0
    assert ilo.logouts == ilo.logins
    page = probe(on_loop, prober, f"target={closed_port()}")
    assert value(page, "smartarray_probe_success") == 0.0


def test_run_answering_http_itself_says_that_probe_is_serves(tmp_path):
    """`run` with a [probe] table answers /probe with 404, and says so at start."""
    from .agent_process import AgentProcess, simulated

    login = credentials_file(tmp_path)
    agent = AgentProcess(tmp_path, simulated(tmp_path, "gen9-battery", (
        '[probe]\ntargets = ["ilo-1.example.net"]\n'
        f'[probe.modules.default]\ncredentials_file = "{login}"\n')))
    agent.start()
    try:
        deadline = time.monotonic() + 30
        while "[probe] is answered by `smartarray-agent serve` only" not in agent.logs:
            assert time.monotonic() < deadline, agent.logs
            time.sleep(0.05)
        status, _, _ = agent.request("/probe?target=ilo-1.example.net")
        assert status == 404
    finally:
        agent.kill()
