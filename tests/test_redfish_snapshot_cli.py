"""``status --ilo`` and ``check --ilo``: the controllers from a (fake) iLO over real HTTPS,
with the ``[redfish]`` login and TLS settings, and no vendor CLI at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .agent_cli import Ran
from .agent_cli import agent as run_agent
from .model_reader import STATUS_SCHEMA
from .redfish_ilo import (
    CHASSIS,
    ILO5_CONTROLLER,
    ILO5_TREE,
    ILO6_TREE,
    PASSWORD,
    Ilo,
    battery_ilo5,
    certificate,
    closed_port,
    credentials_file,
    serve,
    tree,
)


def agent(tmp_path: Path, *args: str) -> Ran:
    """The agent, in this process (tests/agent_cli.py), on a PATH with no vendor CLI on it:
    nothing but the iLO can answer."""
    env = {**os.environ, "PATH": str(tmp_path), "SMARTARRAY_SIM_STATE_DIR": str(tmp_path)}
    return run_agent(*args, env=env)


def config(tmp_path: Path, address: str | None, read_timeout_s: float = 2) -> str:
    """A configuration whose [redfish] table trusts the fake iLO's certificate; without
    ``address``, the table is the login alone."""
    path = tmp_path / "config.toml"
    own = "" if address is None else f'address = "{address}"\n'
    path.write_text(
        f'[redfish]\n{own}credentials_file = "{credentials_file(tmp_path)}"\n'
        f'ca_file = "{certificate()[0]}"\nconnect_timeout_s = 2\n'
        f"read_timeout_s = {read_timeout_s}\n")
    return str(path)


def ilo5(**controller: object) -> dict[str, dict]:
    documents = tree(ILO5_TREE)
    documents[ILO5_CONTROLLER].update(controller)
    return documents


def test_status_ilo_json_is_the_status_contract_from_the_ilo_alone(tmp_path):
    # the [redfish] address names another iLO: --ilo decides where to read
    cfg = config(tmp_path, closed_port())
    with serve(Ilo(ilo5())) as ilo:
        result = agent(tmp_path, "status", "--ilo", ilo.address, "--json", "--config", cfg)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    STATUS_SCHEMA.validate(data)
    (ctrl,) = data["controllers"]
    assert (ctrl["slot"], ctrl["serial"], ctrl["status"]) == ("0", "PSIMXP408IA001", "ok")
    assert {key: ctrl["cache"][key] for key in (
        "status", "size_bytes", "read_percent", "write_percent", "no_battery_write_cache",
        "drive_write_cache", "present")} == {
        "status": "ok", "size_bytes": 2**31, "read_percent": 20, "write_percent": 80,
        "no_battery_write_cache": False, "drive_write_cache": False, "present": True}
    assert ctrl["backup_power"]["charge_percent"] == 99.0
    assert [d["usage_remaining_percent"] for d in ctrl["physical_drives"]] == [97, 97, 96, None]
    assert ctrl["logical_drives"][0]["status"] == "ok"
    assert data["cli_version"] is None and data["notices"][0].startswith(
        f"redfish: read from the iLO at {ilo.address} alone")
    assert ilo.logins and ilo.logins == ilo.logouts
    assert {method for method, _, _ in ilo.requests} == {"POST", "GET", "DELETE"}


def test_a_station_with_no_ilo_of_its_own_reads_one_with_the_login_alone(tmp_path):
    # [redfish] without address: how to log in to iLOs, on a host whose own iLO (if any) is
    # not read: --ilo names the one to read, and nothing else reads an iLO
    cfg = config(tmp_path, None)
    with serve(Ilo(ilo5())) as ilo:
        status = agent(tmp_path, "status", "--ilo", ilo.address, "--config", cfg)
        check = agent(tmp_path, "check", "--ilo", ilo.address, "--config", cfg)
        assert agent(tmp_path, "config", "check", cfg).returncode == 0
        metrics = agent(tmp_path, "metrics", "--once", "--simulate", "gen10", "--config", cfg,
                        "--lock-file", str(tmp_path / "cli.lock"))
        logins_after_metrics = len(ilo.logins)
    assert status.returncode == 0, status.stderr
    assert "PSIMXP408IA001" in status.stdout
    assert check.returncode == 0 and check.stdout.startswith("SMARTARRAY OK"), check.stdout
    assert metrics.returncode == 0, metrics.stderr
    assert 'collector="redfish"' not in metrics.stdout  # no iLO of its own to collect from
    assert logins_after_metrics == 2  # status and check logged in; metrics did not


def test_status_ilo_table(tmp_path):
    with serve(Ilo(ilo5())) as ilo:
        result = agent(tmp_path, "status", "--ilo", ilo.address,
                       "--config", config(tmp_path, ilo.address))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("HPE Smart Array P408i-a SR Gen10 in slot 0\n")
    assert "batteries x1, OK, charge 99%" in result.stdout
    assert "20% read / 80% write" in result.stdout


def test_status_ilo6_says_what_the_dmtf_model_lacks(tmp_path):
    with serve(Ilo(tree(ILO6_TREE))) as ilo:
        result = agent(tmp_path, "status", "--ilo", ilo.address, "--json",
                       "--config", config(tmp_path, ilo.address))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    STATUS_SCHEMA.validate(data)
    (ctrl,) = data["controllers"]
    assert ctrl["cache"]["size_bytes"] == 2**32
    assert ctrl["cache"]["read_percent"] is None
    assert ctrl["backup_power"]["status"] is None
    assert any("DMTF Storage model gives no cache ratio" in n for n in ctrl["notices"])
    assert [d["usage_remaining_percent"] for d in ctrl["physical_drives"]] == [97, None]


def test_check_ilo_ok(tmp_path):
    with serve(Ilo(ilo5())) as ilo:
        result = agent(tmp_path, "check", "--ilo", ilo.address,
                       "--config", config(tmp_path, ilo.address))
    assert (result.returncode, result.stdout.split(" |")[0]) == (
        0, "SMARTARRAY OK - 1 controller(s) ok, 4 physical drive(s) ok"), result.stderr
    assert "'slot0_charge'=99%" in result.stdout


def test_check_ilo_flags_unprotected_write_cache(tmp_path):
    documents = ilo5(WriteCacheWithoutBackupPowerEnabled=True)
    documents[CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"] = [battery_ilo5(charge=45)]
    with serve(Ilo(documents)) as ilo:
        result = agent(tmp_path, "check", "--ilo", ilo.address,
                       "--config", config(tmp_path, ilo.address))
    assert result.returncode == 2, result.stdout
    assert result.stdout.startswith("SMARTARRAY CRITICAL - ")
    assert ("slot 0 write cache unprotected: controller write cache active (no-battery write "
            "cache on) on backup power batteries ok, charge 45%") in result.stdout


def test_check_ilo_flags_drive_write_cache(tmp_path):
    with serve(Ilo(ilo5(DriveWriteCache="Enabled"))) as ilo:
        result = agent(tmp_path, "check", "--ilo", ilo.address,
                       "--config", config(tmp_path, ilo.address))
    assert result.returncode == 2, result.stdout
    assert "slot 0 write cache unprotected: drive write cache on" in result.stdout


def test_an_unreachable_ilo_fails_status_and_is_unknown_to_check(tmp_path):
    cfg = config(tmp_path, "ilo.invalid")
    address = closed_port()
    status = agent(tmp_path, "status", "--ilo", address, "--config", cfg)
    check = agent(tmp_path, "check", "--ilo", address, "--config", cfg)
    assert status.returncode == 1 and status.stdout == ""
    assert status.stderr.startswith("smartarray-agent: the iLO could not be read: cannot "
                                    f"connect to {address}")
    assert check.returncode == 3
    assert check.stdout.startswith("SMARTARRAY UNKNOWN - the iLO could not be read: ")
    assert PASSWORD not in status.stderr + check.stdout


def test_ilo_needs_the_redfish_settings_and_no_vendor_cli_options(tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    no_table = agent(tmp_path, "status", "--ilo", "ilo.example", "--config", str(empty))
    assert no_table.returncode == 2
    assert "--ilo ilo.example: the configuration file has no [redfish] table" in no_table.stderr
    cfg = config(tmp_path, "ilo.example")
    bad = agent(tmp_path, "status", "--ilo", "ilo.example:99999", "--config", cfg)
    assert bad.returncode == 2 and "the port is not a number" in bad.stderr
    both = agent(tmp_path, "status", "--ilo", "ilo.example", "--simulate", "gen10")
    assert both.returncode == 2 and "--ilo excludes --input, --simulate" in both.stderr
    check = agent(tmp_path, "check", "--ilo", "ilo.example", "--input", "-")
    assert check.returncode == 3 and check.stdout.startswith(
        "SMARTARRAY UNKNOWN - usage: --ilo excludes")


def test_change_commands_do_not_take_ilo(tmp_path):
    for command in (["write-cache", "disable", "--what", "no-battery", "--slot", "0"],
                    ["set-cache-ratio", "50/50", "--slot", "0"]):
        result = agent(tmp_path, *command, "--ilo", "ilo.example")
        assert result.returncode == 2 and "No such option: --ilo" in result.stderr


def test_a_collection_the_ilo_does_not_have_is_said_not_guessed(tmp_path):
    documents = ilo5()
    del documents[ILO5_CONTROLLER + "DiskDrives/"]  # the fake iLO answers 404
    with serve(Ilo(documents)) as ilo:
        result = agent(tmp_path, "status", "--ilo", ilo.address, "--json",
                       "--config", config(tmp_path, ilo.address))
    assert result.returncode == 0, result.stderr
    (ctrl,) = json.loads(result.stdout)["controllers"]
    assert ctrl["physical_drives"] == [] and len(ctrl["logical_drives"]) == 1
    assert ctrl["notices"] == [f"redfish: {ILO5_CONTROLLER}DiskDrives/ was not read: no "
                               "PhysicalDrives known"]


def test_check_ilo_timeout_names_the_ilo(tmp_path):
    """-t bounds the whole check, the iLO's answers included."""
    with serve(Ilo(ilo5(), hang={ILO5_CONTROLLER})) as ilo:
        result = agent(tmp_path, "check", "--ilo", ilo.address, "-t", "1",
                       "--config", config(tmp_path, ilo.address, read_timeout_s=20))
    assert result.returncode == 3, result.stdout
    assert result.stdout == (f"SMARTARRAY UNKNOWN - reading the iLO {ilo.address} timed out "
                             "after 1 s\n")
