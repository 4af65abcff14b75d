"""Issue #37's holes in the write path, each through the real command on the simulator and the
fake iLO: a battery the iLO calls Critical, an iLO that drips its answers, a battery that
cannot be tied to the controller, a rotation of the audit log after a SIGKILL, and hostile
JSON. Each found a change let through, or its record lost; each must fail closed."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import threading
import time

import pytest

from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.redfish.crawl import read_reading
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.sysfs import SysfsCollector
from smartarray_agent.daemon.loop import CollectionLoop
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.render import MetricSettings
from smartarray_agent.exporter.view import MetricsView
from smartarray_agent.write.history import unfinished

from . import fake_sysfs
from . import redfish_ilo as fake
from .test_change import Host
from .test_reconcile import Host as KillableHost
from .test_reconcile import _kill_mid_change, _reconciled
from .test_redfish_snapshot_cli import agent as agent_without_cli
from .test_redfish_snapshot_cli import config as ilo_only_config
from .test_write_faults import NBWC_ON, ilo_config, outcomes


def _refused_and_nothing_sent(host: Host, result) -> None:
    assert result.returncode == 4, (result.stdout, result.stderr)
    assert host.modifies() == []
    assert outcomes(host)[-1] == ("outcome", "refused")


# -- 1. one judgement: a battery the iLO calls Critical is failed for every reader -------------

def test_a_battery_the_ilo_calls_critical_refuses_the_enable_and_shows_failed(tmp_path):
    host = Host(tmp_path, "gen10")
    battery = fake.battery_ilo5(charge=97, health="Critical")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[battery]))) as ilo:
        config = ilo_config(tmp_path, ilo.address)
        result = host.agent(*NBWC_ON, "--yes", "--config", config)
        status = host.agent_with([*host.common[:2], "--lock-file", host.common[-1]],
                                 "status", "--json", "--config", config)
        check = host.agent_with([*host.common[:2], "--lock-file", host.common[-1]],
                                "check", "--config", config)
    _refused_and_nothing_sent(host, result)
    assert "batteries failed" in result.stderr
    power = json.loads(status.stdout)["controllers"][0]["backup_power"]
    assert (power["status"], power["charge_percent"]) == ("failed", 97)
    assert check.returncode == 2 and check.stdout.startswith("SMARTARRAY CRITICAL"), check.stdout


# -- 2. an iLO that drips: a deadline for the whole answer and the whole read ----------------

def test_a_re_read_that_drips_refuses_the_enable_within_read_timeout(tmp_path):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(), drip={fake.CHASSIS: 0.2})) as ilo:
        result = host.agent(*NBWC_ON, "--yes", "--config", ilo_config(tmp_path, ilo.address))
    _refused_and_nothing_sent(host, result)
    assert f"no complete answer to GET {fake.CHASSIS} within 2 s (read_timeout_s)" \
        in result.stderr


def _settings(tmp_path, address: str, **limits: float) -> RedfishSettings:
    return RedfishSettings(address=address, credentials_file=fake.credentials_file(tmp_path),
                           ca_file=fake.certificate()[0], **limits)


def test_a_read_whose_answers_each_come_in_time_still_ends_at_read_deadline(tmp_path):
    slow = {path: 0.4 for path in (fake.CHASSIS, fake.SYSTEM, fake.CONTROLLERS)}
    with fake.serve(fake.Ilo(fake.ilo5(), delay_s=slow)) as ilo:
        settings = _settings(tmp_path, ilo.address, read_timeout_s=5, read_deadline_s=0.6)
        with pytest.raises(RedfishError, match=r"the read.s time"):
            asyncio.run(read_reading(settings))
        assert ilo.logouts == ilo.logins  # the session was still ended


class _Held:
    """A collector of its own interval (as the iLO's) whose collection waits for ``go``."""

    name = "redfish"
    HELP: dict[str, str] = {}
    interval_s = 300.0

    def __init__(self) -> None:
        self.go = threading.Event()
        self.started = threading.Event()

    def collect(self):
        self.started.set()
        if not self.go.wait(30):
            raise CollectionError("never let go")
        return []

    def families(self, data, now):
        return []

    def changes_at(self, data):
        return None

    def summary(self, data):
        return "held"

    def watch(self, poke):
        pass

    def close(self):
        pass


def test_a_daemon_round_waiting_on_the_ilo_holds_back_no_other_collection(tmp_path):
    sysfs = fake_sysfs.build(tmp_path / "sys")
    held = _Held()
    view = MetricsView(MetricSettings(stale_after_s=None))
    loop = CollectionLoop([SysfsCollector(lambda: fake_sysfs.host_dirs(sysfs)), held], view,
                          Notifier(None), interval_s=0.2, debounce_s=0.1)
    loop.start()
    try:
        assert held.started.wait(10)
        deadline = time.monotonic() + 10
        while loop.rounds < 3:  # rounds go on while the iLO's read waits
            assert time.monotonic() < deadline, f"{loop.rounds} rounds"
            time.sleep(0.02)
        assert b"smartarray_host_info{" in view.body()
        assert b'smartarray_collector_success{collector="redfish"} 1' not in view.body()
        held.go.set()
        while b'smartarray_collector_success{collector="redfish"} 1' not in view.body():
            assert time.monotonic() < deadline + 10, "the iLO's result was never published"
            time.sleep(0.02)
    finally:
        held.go.set()
        loop.stop()
        assert loop.join(5)


# -- 3. a battery that cannot be tied to the controller counts as unread --------------------

def _two_batteries() -> dict:
    return fake.ilo5(batteries=[fake.battery_ilo5(charge=10, index=1),
                                fake.battery_ilo5(charge=10, index=2)])


def _serial_of_no_controller() -> dict:
    return fake.ilo5(batteries=[fake.battery_ilo5(charge=50)],
                     controllers=[fake.controller(serial="PNOSUCHSERIAL1", slot="3")])


def _no_battery_list() -> dict:
    resources = fake.ilo5()
    del resources[fake.CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"]
    return resources


@pytest.mark.parametrize("answer", [_two_batteries, _serial_of_no_controller, _no_battery_list])
def test_a_battery_that_cannot_be_tied_to_the_controller_refuses_the_enable(tmp_path, answer):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[fake.battery_ilo5(charge=97)]))) as ilo:
        config = ilo_config(tmp_path, ilo.address)
        ilo.resources = answer()
        refused = host.agent(*NBWC_ON, "--yes", "--config", config)
        _refused_and_nothing_sent(host, refused)
        assert "could not be tied to" in refused.stderr
        assert "--without-ilo-charge" in refused.stderr
        allowed = host.agent(*NBWC_ON, "--yes", "--config", config, "--without-ilo-charge")
    assert allowed.returncode == 0, allowed.stderr
    assert host.modifies() == ["ctrl slot=0 modify nobatterywritecache=enable"]


# -- 4. a rotation between a SIGKILL and the next change -------------------------------------

@pytest.mark.parametrize("compressed", [False, True])
def test_an_intent_rotated_away_after_a_kill_is_still_reconciled(tmp_path, compressed):
    host = KillableHost(tmp_path, "unsafe-nbwc")
    intent = _kill_mid_change(host, "ctrl slot=0 show config detail",
                              "ctrl slot=0 show config detail")
    # as the shipped logrotate config does it: rename with dateext, compress (later)
    rotated = host.audit.with_name(f"{host.audit.name}-20261127-{int(time.time())}")
    os.rename(host.audit, rotated)
    if compressed:
        with open(rotated, "rb") as plain, gzip.open(f"{rotated}.gz", "wb") as packed:
            packed.write(plain.read())
        rotated.unlink()
    assert [c.ident for c in unfinished(host.audit)] == [intent["id"]]
    change = host.run("set-cache-ratio", "50/50", "--slot", "0")
    assert change.returncode == 0, change.stderr
    assert "the change is in effect" in change.stderr
    assert _reconciled(host, intent)["in_effect"] is True
    assert unfinished(host.audit) == []


def test_an_open_intent_in_a_rotated_file_refuses_the_next_change(tmp_path):
    host = KillableHost(tmp_path, "gen9-battery")
    intent = {"time": "2026-11-24T03:00:00.000+00:00", "user": "alice", "host": "db1",
              "id": "5e1f0c2a9b3d4e6f8a7b6c5d4e3f2a10", "event": "intent", "outcome": None,
              "controller": {"slot": "0", "serial": None},
              "requested": {"kind": "cache-ratio", "read_percent": 25, "write_percent": 75},
              "command": ["ctrl", "slot=0", "modify", "cacheratio=25/75"]}
    host.audit.with_name(f"{host.audit.name}-20261124-1763953200").write_text(
        json.dumps(intent) + "\n")
    broken = host.start("set-cache-ratio", "0/100", "--slot", "0",
                        faults={"crash": ["ctrl slot=0 show config detail"]})
    _, err = broken.communicate(timeout=120)
    assert broken.returncode == 4, err
    assert f"record {intent['id']}" in err and "nothing sent" in err


# -- 5. hostile JSON is an iLO that could not be read ----------------------------------------

HOSTILE = {
    "a 5,000-digit integer": b'{"Oem": {"Hpe": {"SmartStorageBattery": [{"ChargeLevelPercent": '
                             + b"9" * 5000 + b"}]}}}",
    "200,000-deep nesting": b'{"Oem": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "not JSON": b"<html>iLO</html>",
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_json_refuses_the_enable_with_a_record(tmp_path, body):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(), raw={fake.CHASSIS: body})) as ilo:
        result = host.agent(*NBWC_ON, "--yes", "--config", ilo_config(tmp_path, ilo.address))
    _refused_and_nothing_sent(host, result)
    assert "Traceback" not in result.stderr
    assert "the answer is not JSON" in result.stderr


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_json_is_unknown_for_check_ilo(tmp_path, body):
    with fake.serve(fake.Ilo(fake.tree(fake.ILO5_TREE),
                             raw={fake.CHASSIS: body})) as ilo:
        result = agent_without_cli(tmp_path, "check", "--ilo", ilo.address,
                                   "--config", ilo_only_config(tmp_path, ilo.address))
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stdout.startswith("SMARTARRAY UNKNOWN"), result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("batteries", [[7, "x", None], {"Index": 1}, "none"])
def test_battery_data_of_the_wrong_type_refuses_the_enable(tmp_path, batteries):
    host = Host(tmp_path, "gen10")
    resources = fake.ilo5()
    resources[fake.CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = batteries
    with fake.serve(fake.Ilo(resources)) as ilo:
        result = host.agent(*NBWC_ON, "--yes", "--config", ilo_config(tmp_path, ilo.address))
    _refused_and_nothing_sent(host, result)
    assert "Traceback" not in result.stderr
