"""Issue #25's holes in the write path, each through the real command on the simulator (and
the fake iLO): a charge gone stale behind a prompt, a NaN threshold, a disk that fills
between the intent and the outcome, an audit path that is not a regular file, and the iLO's
``PresentAndCharged``/``PresentAndCharging`` backup power."""

from __future__ import annotations

import json
import os
import stat
import sys
import syslog
import textwrap
from pathlib import Path

import pexpect
import pytest

from smartarray_agent.simulator import vendor_argv
from smartarray_agent.write.audit import AuditError, AuditLog

from . import redfish_ilo as fake
from .agent_cli import spawn
from .test_change import Host, read_audit
from .test_write_faults import NBWC_ON, ilo_config, prompt

DWC_ON = ("write-cache", "enable", "--what", "drive", "--usage", "configured", "--slot", "0")


# -- 1. the charge judged under the lock is one read in that step ----------------------------

@pytest.mark.parametrize("stops", ["503", "hang"])
def test_an_ilo_that_stops_answering_after_the_prompt_refuses_the_enable(tmp_path, stops):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[fake.battery_ilo5(charge=99)]))) as ilo:
        child = prompt(host, *NBWC_ON, config=ilo_config(tmp_path, ilo.address))
        ilo.resources[fake.CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"][0][
            "ChargeLevelPercent"] = 50
        if stops == "503":
            ilo.status[fake.CHASSIS] = 503
        else:
            ilo.hang.add(fake.CHASSIS)  # past read_timeout_s (2 s)
        child.sendline("y")
        child.expect(pexpect.EOF)
        child.close()
        ilo.release.set()
    assert child.exitstatus == 4, child.before
    assert "the iLO could not be read" in child.before
    assert host.modifies() == []
    [refusal] = host.audit_entries()
    assert refusal["outcome"] == "refused" and refusal["charge_percent"] is None


@pytest.mark.parametrize("change", [NBWC_ON, DWC_ON], ids=["no-battery", "drive"])
def test_with_yes_the_ilo_is_read_once_for_the_one_judgement(tmp_path, change):
    host = Host(tmp_path, "gen10")
    resources = fake.ilo5(batteries=[fake.battery_ilo5(charge=99)])
    with fake.serve(fake.Ilo(resources, fail_after={fake.CHASSIS: (1, 503)})) as ilo:
        result = host.agent(*change, "--yes", "--config", ilo_config(tmp_path, ilo.address))
        chassis_reads = [r for r in ilo.requests if r[1] == fake.CHASSIS]
    assert len(chassis_reads) == 1  # no question: the one read before the lock is judged
    assert result.returncode == 0, result.stderr
    assert [r["charge_percent"] for r in host.audit_entries()] == [99, 99]


def test_the_audit_record_carries_the_charge_judged_and_when_it_was_read(tmp_path):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[fake.battery_ilo5(charge=97)]))) as ilo:
        result = host.agent(*NBWC_ON, "--yes", "--config", ilo_config(tmp_path, ilo.address))
    assert result.returncode == 0, result.stderr
    intent, outcome = host.audit_entries()
    for record in intent, outcome:
        assert record["charge_percent"] == 97
        assert record["charge_read_at"] <= record["time"]
        assert "charge 97%" in record["backup_power"]


def test_a_charge_just_below_the_threshold_is_shown_as_judged(tmp_path):
    host = Host(tmp_path, "gen10")
    battery = fake.battery_ilo5(charge=79.99999)
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[battery]))) as ilo:
        result = host.agent(*NBWC_ON, "--yes", "--config", ilo_config(tmp_path, ilo.address))
    assert result.returncode == 4, result.stderr
    assert "charge 79.99999%" in result.stderr
    [refusal] = host.audit_entries()
    assert "charge 79.99999%" in refusal["backup_power"]


@pytest.mark.parametrize("charge", [None, "50", 255, -1])
def test_an_ilo_whose_charge_cannot_be_meant_counts_as_unread(tmp_path, charge):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[fake.battery_ilo5(charge=charge)]))) as ilo:
        config = ilo_config(tmp_path, ilo.address)
        refused = host.agent(*NBWC_ON, "--yes", "--config", config)
        allowed = host.agent(*NBWC_ON, "--yes", "--config", config, "--without-ilo-charge")
    assert refused.returncode == 4, refused.stderr
    assert f"ChargeLevelPercent {json.dumps(charge)}" in refused.stderr
    assert allowed.returncode == 0, allowed.stderr


# -- 2. every threshold is a finite number from 0 to 100 --------------------------------------

@pytest.mark.parametrize("threshold", ["nan", "NaN", "inf", "-5", "high", "100.5"])
def test_a_threshold_that_is_not_a_number_from_0_to_100_is_bad_input(tmp_path, threshold):
    host = Host(tmp_path, "unsafe-nbwc")
    result = host.agent(*NBWC_ON, "--yes", "--threshold", threshold)
    assert result.returncode == 2, result.stderr
    assert host.modifies() == [] and not host.audit.exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_configured_threshold_that_is_not_finite_is_bad_input(tmp_path, value):
    host = Host(tmp_path, "unsafe-nbwc")
    config = tmp_path / "config.toml"
    config.write_text(f"[policy]\nbattery_threshold_percent = {value}\n")
    result = host.agent(*NBWC_ON, "--yes", "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert "battery_threshold_percent" in result.stderr
    assert host.modifies() == [] and not host.audit.exists()


def test_the_audit_writer_refuses_a_record_that_is_not_strict_json(tmp_path):
    path = tmp_path / "audit.jsonl"
    with pytest.raises(AuditError, match="not valid JSON"):
        AuditLog(path, to_syslog=False).record({"threshold_percent": float("nan")})
    assert not path.exists() or path.read_bytes() == b""


# -- 3. a disk that fills between the intent and the outcome ----------------------------------

def filling_cli(tmp_path: Path, host: Host, room: int) -> Path:
    """A vendor CLI (the simulator behind a wrapper) that, when a modify arrives, leaves the
    agent that started it ``room`` bytes of audit file: RLIMIT_FSIZE, as a full disk would.
    It has no console, so the modify arrives as its arguments (the runner falls back)."""
    program = tmp_path / "ssacli"
    argv = vendor_argv("gen9-battery", host.state_dir)
    program.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import os, resource, sys
        command = sys.argv[1:]
        if not command:
            sys.exit("Error: no console here")
        if "modify" in command and not any("=?" in word for word in command):
            size = os.path.getsize({str(host.audit)!r}) + {room}
            resource.prlimit(os.getppid(), resource.RLIMIT_FSIZE, (size, size))
        os.execv({argv[0]!r}, {argv!r} + command)
        """))
    program.chmod(0o755)
    return program


def test_an_outcome_the_full_disk_refuses_goes_to_syslog_and_exits_12(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    common = host.common[2:]  # without --simulate: the wrapper is the CLI
    cli = filling_cli(tmp_path, host, room=40)
    # a process of its own: the wrapper limits the size of the files its parent writes
    result = spawn(*NBWC_ON, "--yes", "--cli", str(cli), *common, env=host.env)
    assert result.returncode == 12, result.stderr
    assert "not recorded" in result.stderr and "File too large" in result.stderr
    assert host.status()["cache"]["no_battery_write_cache"] is True  # it was sent
    records, torn = read_audit(host.audit)
    assert torn == []  # the part written was cut off again
    assert [(r["event"], r["outcome"]) for r in records] == [("intent", None)]


def test_a_torn_last_line_is_ended_and_the_reader_skips_and_reports_it(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    host.audit.write_text('{"id":"earlier","event":"intent","outcome":null}\n{"id":"torn","ev')
    result = host.agent(*NBWC_ON, "--yes")
    assert result.returncode == 0, result.stderr
    records, torn = read_audit(host.audit)
    assert torn == [2]
    assert [(r["event"], r["outcome"]) for r in records] == [
        ("intent", None), ("intent", None), ("outcome", "changed")]


def test_syslog_gets_the_record_when_the_file_does_not(tmp_path, monkeypatch):
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr("syslog.syslog", lambda priority, text: sent.append((priority, text)))
    (tmp_path / "a-file").write_text("")
    audit = AuditLog(tmp_path / "a-file" / "audit.jsonl")  # its folder cannot be made
    with pytest.raises(AuditError):
        audit.record({"event": "outcome", "outcome": "changed", "message": "done"})
    [(priority, text)] = sent
    assert priority == syslog.LOG_ERR
    assert "NOT in the audit file" in text and '"outcome":"changed"' in text


# -- 4. the audit path is a regular file or absent --------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "symlink", "device"])
def test_an_audit_path_that_is_not_a_regular_file_stops_the_change_first(tmp_path, kind):
    host = Host(tmp_path, "gen9-battery")
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    if kind == "fifo":
        os.mkfifo(host.audit)
    elif kind == "symlink":
        host.audit.symlink_to(target)
    else:
        host.common[host.common.index("--audit-file") + 1] = "/dev/null"
    result = host.agent(*NBWC_ON, "--yes")
    assert result.returncode == 10, result.stderr
    assert "nothing sent" in result.stderr
    assert host.modifies() == []
    assert target.read_text() == ""
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(host.audit).st_mode)


# -- 5. every present BackupPowerSourceStatus maps the charge ---------------------------------

@pytest.mark.parametrize(("status", "charge", "backup"), [
    ("Present", 99, "ok"), ("PresentAndCharged", 99, "ok"),
    ("PresentAndCharging", 99, "recharging"), ("NotPresent", None, "ok")])
def test_the_charge_maps_for_every_present_backup_power_status(tmp_path, status, charge,
                                                                 backup):
    host = Host(tmp_path, "gen10")
    resources = fake.ilo5(batteries=[fake.battery_ilo5(charge=99)],
                          controllers=[fake.controller(backup=status)])
    with fake.serve(fake.Ilo(resources)) as ilo:
        config = ilo_config(tmp_path, ilo.address)
        shown = host.agent_with(host.common[:2], "status", "--json", "--config", config)
        change = host.agent(*NBWC_ON, "--yes", "--config", config, "--without-ilo-charge")
    assert shown.returncode == 0, shown.stderr
    power = json.loads(shown.stdout)["controllers"][0]["backup_power"]
    assert (power["charge_percent"], power["status"]) == (charge, backup)
    assert change.returncode == (4 if backup == "recharging" else 0), change.stderr
