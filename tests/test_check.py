"""``smartarray-agent check`` as Nagios runs it, and its judgement case by case."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from smartarray_agent.cli import plugin as check
from smartarray_agent.model import BackupPower, Cache, Controller, PhysicalDrive, Snapshot


@pytest.mark.parametrize(
    ("scenario", "code", "words"),
    [
        ("gen9-battery", 0, ["SMARTARRAY OK - 1 controller(s) ok"]),
        ("recharging", 1, ["WARNING", "backup power recharging"]),
        ("failed-battery", 2, ["CRITICAL", "backup power failed"]),
        ("unsafe-nbwc", 2, ["CRITICAL", "write cache unprotected"]),
        ("hba-mode", 0, ["OK"]),
    ],
)
def test_plugin_exit_code_and_line_per_scenario(tmp_path, scenario, code, words):
    env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(tmp_path))
    env.pop("SMARTARRAY_SIM_FAULTS", None)
    result = subprocess.run([sys.executable, "-m", "smartarray_agent", "check", "--simulate",
                             scenario], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == code, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    for word in words:
        assert word in lines[0]
    assert " | " in lines[0]  # perfdata


def test_a_cli_that_cannot_run_is_unknown(tmp_path):
    result = subprocess.run([sys.executable, "-m", "smartarray_agent", "check", "--cli",
                             str(tmp_path / "ssacli")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 3
    assert result.stdout.startswith("SMARTARRAY UNKNOWN - no Smart Array CLI found")


def ctrl(**fields) -> Controller:
    base = dict(slot="0", model="Smart Array P440ar", status="ok",
                cache=Cache(present=True, status="ok", read_percent=10, write_percent=90,
                            no_battery_write_cache=False, drive_write_cache=False),
                backup_power=BackupPower(source="batteries", count=1, status="ok"))
    return Controller(**{**base, **fields})


LIMITS = check.Thresholds(charge_warning=90, charge_critical=80)


@pytest.mark.parametrize(
    ("controller", "code", "problem"),
    [
        (ctrl(), check.OK, None),
        (ctrl(status="failed"), check.CRITICAL, "controller failed"),
        (ctrl(physical_drives=[PhysicalDrive(drive_id="1I:1:1", status="failed")]),
         check.CRITICAL, "physical drive 1I:1:1 failed"),
        (ctrl(backup_power=BackupPower(source="batteries", status="ok", charge_percent=85)),
         check.WARNING, "charge 85%"),
        (ctrl(backup_power=BackupPower(source="batteries", status="ok", charge_percent=70)),
         check.CRITICAL, "write cache unprotected"),
        (ctrl(cache=Cache(present=True, status="ok", write_percent=50, drive_write_cache=True)),
         check.CRITICAL, "write cache unprotected"),
        (ctrl(cache=Cache(present=True, status="permanently_disabled")), check.WARNING,
         "cache permanently_disabled"),
    ],
)
def test_judgement(controller, code, problem):
    result = check.judge(Snapshot(controllers=[controller]), LIMITS)
    assert result.code == code
    if problem:
        assert any(problem in p for p in result.problems)
    else:
        assert result.problems == []


def test_no_controller_is_unknown():
    assert check.judge(Snapshot(), LIMITS).code == check.UNKNOWN
