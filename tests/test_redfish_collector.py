"""The Redfish collector against a real HTTPS server on loopback that answers like an iLO."""

from __future__ import annotations

import logging
import os

import pytest

from smartarray_agent.collectors.redfish.collector import read_reading
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings

from .redfish_ilo import (
    CHASSIS,
    CONTROLLERS,
    GEN10_SERIAL,
    PASSWORD,
    SYSTEM,
    Ilo,
    battery_ilo5,
    certificate,
    closed_port,
    credentials_file,
    ilo4,
    ilo5,
    ilo5_without_oem,
    serve,
    silent_listener,
)


def settings(tmp_path, address: str, password: str = PASSWORD, **overrides) -> RedfishSettings:
    values = {
        "address": address,
        "credentials_file": credentials_file(tmp_path, password),
        "ca_file": certificate()[0],
        "connect_timeout_s": 2,
        "read_timeout_s": 2,
    }
    return RedfishSettings(**{**values, **overrides})


def collect(tmp_path, ilo: Ilo, **overrides):
    with serve(ilo):
        return read_reading(settings(tmp_path, ilo.address, **overrides),
                            clock=lambda: 1234.5)


def failure(tmp_path, ilo: Ilo, **overrides) -> str:
    with serve(ilo), pytest.raises(RedfishError) as caught:
        read_reading(settings(tmp_path, ilo.address, **overrides))
    message = str(caught.value)
    assert "\n" not in message and PASSWORD not in message
    return message


def test_healthy_ilo5_in_one_logged_out_session(tmp_path):
    ilo = Ilo(ilo5())
    reading = collect(tmp_path, ilo)
    assert reading.taken_at == 1234.5
    (battery,) = reading.batteries
    assert battery.model_dump(exclude_none=True) == {
        "index": 1, "model": "875241-B21", "product_name": "HPE Smart Storage Battery",
        "serial": "6WQXK0JWYF441K", "spare_part": "878643-001", "firmware": "0.70",
        "charge_percent": 99.0, "capacity_watts": 96.0, "remaining_charge_time_s": 0.0,
        "health": "ok", "health_text": "OK", "state": "enabled",
    }
    (ctrl,) = reading.controllers
    assert (ctrl.slot, ctrl.serial, ctrl.backup_power, ctrl.cache_module_health) == (
        "0", GEN10_SERIAL, "present", "ok")
    assert ilo.logins == ilo.logouts == ["monitor0000"]
    assert [(m, auth) for m, _, auth in ilo.requests if m == "GET"] == [("GET", "session")] * 3
    assert SYSTEM not in [path for _, path, _ in ilo.requests]  # iLO 5: the chassis is enough


@pytest.mark.parametrize(
    ("battery", "charge", "health", "remaining"),
    [
        (battery_ilo5(charge=42), 42.0, "ok", 0.0),  # low charge
        (battery_ilo5(charge=61, health="Warning", remaining_s=1740), 61.0, "warning", 1740.0),
        (battery_ilo5(charge=0, health="Critical", ErrorCode="PermanentFailure",
                      FailurePredicted=True), 0.0, "critical", 0.0),  # failed battery
    ],
    ids=["low-charge", "charging", "failed"],
)
def test_battery_states(tmp_path, battery, charge, health, remaining):
    (got,) = collect(tmp_path, Ilo(ilo5(batteries=[battery]))).batteries
    assert (got.charge_percent, got.health, got.remaining_charge_time_s) == (
        charge, health, remaining)


def test_failed_battery_keeps_its_error_code(tmp_path):
    battery = battery_ilo5(charge=0, health="Critical", ErrorCode="PermanentFailure",
                           FailurePredicted=True)
    (got,) = collect(tmp_path, Ilo(ilo5(batteries=[battery]))).batteries
    assert (got.error_code, got.failure_predicted) == ("PermanentFailure", True)


def test_missing_oem_block_is_a_reading_without_batteries(tmp_path):
    ilo = Ilo(ilo5_without_oem())
    reading = collect(tmp_path, ilo)
    assert reading.batteries == []
    assert "no Smart Storage Battery" in reading.notices[0]
    assert ("GET", SYSTEM, "session") in ilo.requests  # looked for the iLO 4 list too
    assert len(reading.controllers) == 1


def test_ilo4_battery_has_no_charge(tmp_path):
    reading = collect(tmp_path, Ilo(ilo4()))
    (battery,) = reading.batteries
    assert battery.charge_percent is None and battery.wear_percent is None
    assert (battery.health, battery.state, battery.capacity_watts, battery.spare_part) == (
        "ok", "enabled", 12.0, "815984-001")
    assert reading.controllers[0].model == "Smart Array P440ar"


def test_no_smartstorage_resource_gives_no_controllers(tmp_path):
    resources = {path: data for path, data in ilo5().items() if not path.startswith(CONTROLLERS)}
    reading = collect(tmp_path, Ilo(resources))
    assert reading.controllers == [] and len(reading.batteries) == 1
    assert "no SmartStorage ArrayControllers" in reading.notices[0]


def test_wrong_password_is_refused_without_a_session(tmp_path):
    ilo = Ilo(ilo5())
    message = failure(tmp_path, ilo, password="not-the-password")
    assert "login refused (HTTP 401)" in message
    assert str(tmp_path / "ilo-credentials.toml") in message
    assert "not-the-password" not in message
    assert ilo.logins == [] and ilo.logouts == []
    assert [m for m, _, _ in ilo.requests] == ["POST"]


def test_basic_auth_when_the_service_has_no_sessions(tmp_path):
    ilo = Ilo(ilo5(), sessions=False)
    reading = collect(tmp_path, ilo)
    assert reading.batteries[0].charge_percent == 99.0
    assert {auth for m, _, auth in ilo.requests if m == "GET"} == {"basic"}
    assert ilo.logins == []


def test_slow_ilo_within_the_read_timeout_is_fine(tmp_path):
    ilo = Ilo(ilo5(), delay_s={CHASSIS: 0.3})
    assert collect(tmp_path, ilo, read_timeout_s=2).batteries[0].charge_percent == 99.0


def test_hung_ilo_hits_the_read_timeout_and_still_logs_out(tmp_path):
    ilo = Ilo(ilo5(), hang={CHASSIS})
    message = failure(tmp_path, ilo, read_timeout_s=0.3)  # the iLO would never answer
    assert message.endswith(f"no complete answer to GET {CHASSIS} within 0.3 s (read_timeout_s)")
    assert ilo.logins == ilo.logouts == ["monitor0000"]


def test_hung_tls_handshake_hits_the_connect_timeout(tmp_path):
    with silent_listener() as address, pytest.raises(RedfishError) as caught:
        read_reading(settings(tmp_path, address, connect_timeout_s=0.3))  # it never shakes
    assert str(caught.value) == f"connecting to {address} timed out after 0.3 s (connect_timeout_s)"


def test_nothing_listening(tmp_path):
    address = closed_port()
    with pytest.raises(RedfishError, match=f"cannot connect to {address}: Connection refused"):
        read_reading(settings(tmp_path, address))


def test_tls_verification_needs_the_ca_file(tmp_path):
    ilo = Ilo(ilo5())
    message = failure(tmp_path, ilo, ca_file=None)  # the system store does not know the iLO
    assert "TLS certificate not trusted" in message and "ca_file" in message
    assert ilo.requests == []  # nothing, not even the login, went over the untrusted link


def test_tls_verification_can_be_turned_off(tmp_path):
    reading = collect(tmp_path, Ilo(ilo5()), ca_file=None, verify_tls=False)
    assert reading.batteries[0].charge_percent == 99.0


def test_http_error_names_the_resource_and_logs_out(tmp_path):
    path = f"{CONTROLLERS}0/"
    ilo = Ilo(ilo5(), status={path: 500})
    assert failure(tmp_path, ilo).endswith(f"GET {path}: HTTP 500")
    assert ilo.logouts == ["monitor0000"]


def test_an_answer_that_is_not_json(tmp_path):
    ilo = Ilo(ilo5(), raw={CHASSIS: b"<html>iLO is starting</html>"})
    assert failure(tmp_path, ilo).endswith(f"GET {CHASSIS}: the answer is not JSON")


def test_credentials_file_opened_up_after_start_is_refused(tmp_path):
    config = settings(tmp_path, closed_port())
    os.chmod(config.credentials_file, 0o644)
    with pytest.raises(RedfishError, match=r"mode 0644.*chmod 600"):
        read_reading(config)


def test_no_password_or_token_in_any_log(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    collect(tmp_path, Ilo(ilo5()))
    collect(tmp_path, Ilo(ilo5(), sessions=False))
    failure(tmp_path, Ilo(ilo5()), password=PASSWORD + "x")
    failure(tmp_path, Ilo(ilo5(), hang={CHASSIS}), read_timeout_s=0.2)
    assert caplog.records  # the client does log
    assert PASSWORD not in caplog.text and "Basic " not in caplog.text
    assert "X-Auth-Token" not in caplog.text
