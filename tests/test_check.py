"""``smartarray-agent check`` as Nagios runs it (in this process, tests/agent_cli.py; run by
its plugin name, as a real process: test_nagios_bundle.py), and its judgement case by case."""

from __future__ import annotations

import os
import re

import pytest

from smartarray_agent.cli import plugin as check
from smartarray_agent.common.model import BackupPower, Cache, Controller, PhysicalDrive, Snapshot
from smartarray_agent.simulator import BUNDLED

from .agent_cli import Ran, agent


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
    result = agent("check", "--simulate", scenario, env=env)
    assert result.returncode == code, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    for word in words:
        assert word in lines[0]
    assert " | " in lines[0]  # perfdata


def test_a_cli_that_cannot_run_is_unknown(tmp_path):
    result = agent("check", "--cli", str(tmp_path / "ssacli"))
    assert result.returncode == 3
    assert result.stdout.startswith(f"SMARTARRAY UNKNOWN - the vendor CLI {tmp_path}/ssacli "
                                    "does not exist")


def ctrl(**fields) -> Controller:
    base = dict(slot="0", model="Smart Array P440ar", status="ok",
                cache=Cache(present=True, status="ok", read_percent=10, write_percent=90,
                            no_battery_write_cache=False, drive_write_cache=False),
                backup_power=BackupPower(source="batteries", count=1, status="ok"))
    return Controller(**{**base, **fields})


LIMITS = check.Thresholds(check.Range(90), check.Range(80), protected_percent=80)


@pytest.mark.parametrize(
    ("controller", "code", "problem"),
    [
        (ctrl(), check.OK, None),
        (ctrl(status="failed"), check.CRITICAL, "controller failed"),
        (ctrl(physical_drives=[PhysicalDrive(drive_id="1I:1:1", status="failed")]),
         check.CRITICAL, "physical drive 1I:1:1 failed"),
        (ctrl(backup_power=BackupPower(source="batteries", status="ok", charge_percent=85.0)),
         check.WARNING, "charge 85%"),
        (ctrl(backup_power=BackupPower(source="batteries", status="ok", charge_percent=70.0)),
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


# The plugin guidelines' output: "SERVICE STATE - text | perfdata", each perfdata item
# 'label'=value[UOM];[warn];[crit];[min];[max] with ranges such as "90:" (below 90 alerts).
_LINE = re.compile(r"^SMARTARRAY (OK|WARNING|CRITICAL|UNKNOWN) - [^|]+?( \| (?P<perf>.+))?$")
_RANGE = r"(@?(~|-?\d+(\.\d+)?)?:?(-?\d+(\.\d+)?)?)?"
_PERF = re.compile(rf"^'[^'=]+'=-?\d+(\.\d+)?(%|s|ms|us|B|KB|MB|TB|c)?"
                   rf"(;{_RANGE}(;{_RANGE}(;(-?\d+(\.\d+)?)?(;(-?\d+(\.\d+)?)?)?)?)?)?$")


def plugin_run(tmp_path, *args: str) -> Ran:
    env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(tmp_path))
    env.pop("SMARTARRAY_SIM_FAULTS", None)
    return agent("check", *args, env=env)


@pytest.mark.parametrize("args", [["--bogus"], ["-w", "many"], ["-c", "150"],
                                  ["-c", "nan"], ["-w", "inf"], ["--simulate"]])
def test_a_usage_error_is_unknown_on_stdout(tmp_path, args):
    result = plugin_run(tmp_path, *args)
    assert result.returncode == check.UNKNOWN
    assert result.stdout.startswith("SMARTARRAY UNKNOWN - usage: ")
    assert len(result.stdout.splitlines()) == 1


def test_short_options_as_plugins_use_them(tmp_path):
    assert plugin_run(tmp_path, "-h").stdout.startswith("Usage: smartarray-agent check ")
    version = plugin_run(tmp_path, "-V")
    assert version.returncode == 0 and version.stdout.startswith("smartarray-agent check ")
    # -w/-c are the charge thresholds; -t the check's timeout
    result = plugin_run(tmp_path, "-w", "95", "-c", "85", "-t", "30", "--simulate",
                        "gen9-battery")
    assert result.returncode == check.OK, result.stdout


def test_a_timeout_is_unknown(tmp_path):
    scenario = tmp_path / "hang.toml"
    scenario.write_text((BUNDLED / "gen9-battery.toml").read_text()
                        + '\n[faults]\nhang = ["*"]\n')
    result = plugin_run(tmp_path, "-t", "1", "--simulate", str(scenario))
    assert result.returncode == check.UNKNOWN
    assert "timed out after 1 s" in result.stdout


@pytest.mark.parametrize("scenario", ["gen9-battery", "recharging", "failed-battery",
                                      "unsafe-nbwc", "two-controllers"])
def test_the_line_and_perfdata_follow_the_guidelines(tmp_path, scenario):
    line = plugin_run(tmp_path, "--simulate", scenario).stdout.rstrip("\n")
    match = _LINE.match(line)
    assert match, line
    for item in match.group("perf").split(" "):
        assert _PERF.match(item), item


def test_the_reason_for_unprotected_write_cache_is_in_the_first_line(tmp_path):
    line = plugin_run(tmp_path, "--simulate", "unsafe-nbwc").stdout
    assert "write cache unprotected: controller write cache active (no-battery write " \
           "cache on) on backup power batteries failed" in line
    result = check.judge(Snapshot(controllers=[ctrl(cache=Cache(
        present=True, status="ok", write_percent=50, drive_write_cache=True))]), LIMITS)
    assert any("drive write cache on" in problem for problem in result.problems)
