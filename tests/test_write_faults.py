"""Every fault of issue #12 through the real commands against the simulator: the audit shows
the attempt or nothing was sent, and the exit code says what happened."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pexpect
import pytest

from smartarray_agent.simulator import resolve_scenario
from smartarray_agent.simulator.scenario import load_scenario

from . import redfish_ilo as fake
from .invocations import read_invocations
from .terminal import Terminal
from .test_change import Host

NBWC_ON = ("write-cache", "enable", "--what", "no-battery", "--slot", "0")


def outcomes(host: Host) -> list[tuple[str, str | None]]:
    return [(e["event"], e["outcome"]) for e in host.audit_entries()]


def test_a_crash_after_the_cli_applied_is_verified_and_recorded(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"crash": ["nobatterywritecache"]})
    result = host.agent(*NBWC_ON, "--yes", "--json")
    assert result.returncode == 0, result.stderr
    assert host.status()["cache"]["no_battery_write_cache"] is True
    assert outcomes(host) == [("intent", None), ("outcome", "changed")]
    assert "exited 134" in json.loads(result.stdout)["message"]


def test_a_modify_that_hangs_is_killed_at_the_timeout_and_recorded(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"hang": ["nobatterywritecache"]})
    result = host.agent(*NBWC_ON, "--yes", "--timeout", "3")  # room for a loaded start-up
    assert result.returncode == 5, result.stderr
    assert "did not finish in 3 s" in result.stderr
    assert outcomes(host) == [("intent", None), ("outcome", "not_applied")]


def test_an_unreadable_re_read_is_outcome_unknown_never_bad_input(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"garbage": ["ctrl slot=0 show config"]})
    result = host.agent(*NBWC_ON, "--yes")
    assert result.returncode == 8, result.stderr
    assert "Outcome unknown: check with `smartarray-agent status`" in result.stderr
    assert outcomes(host) == [("intent", None), ("outcome", "unknown")]
    assert host.status()["cache"]["no_battery_write_cache"] is True  # it was sent


@pytest.mark.parametrize(("path", "reason"), [("/dev/full", "it is not a regular file"),
                                              ("{tmp}", "it is not a regular file")])
def test_an_audit_file_that_cannot_be_written_stops_the_change(tmp_path, path, reason):
    host = Host(tmp_path, "gen9-battery")
    audit = path.format(tmp=tmp_path)
    host.common[host.common.index("--audit-file") + 1] = audit
    result = host.agent(*NBWC_ON, "--yes")
    assert result.returncode == 10
    assert result.stderr == (f"smartarray-agent: cannot write the audit file {audit}: {reason} "
                             "(give a writable --audit-file, or [audit] file in the "
                             "configuration): nothing sent\n")
    assert host.modifies() == []


def test_a_cli_prompt_the_operator_did_not_confirm_is_not_answered(tmp_path):
    host = Host(tmp_path, "unsafe-nbwc", faults={"prompt": ["nobatterywritecache"]})
    result = host.agent("write-cache", "disable", "--what", "no-battery", "--slot", "0")
    assert result.returncode == 5, result.stderr
    assert host.status()["cache"]["no_battery_write_cache"] is True
    assert outcomes(host) == [("intent", None), ("outcome", "not_applied")]


def test_dry_run_and_json_show_the_exact_argv_that_is_sent(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    dry = host.agent("write-cache", "enable", "--what", "drive", "--slot", "0", "--dry-run",
                     "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)["command"]
    assert planned == ["ctrl", "slot=0", "modify", "drivewritecache=enable", "forced"]
    assert outcomes(host) == [("outcome", "dry_run")]
    done = host.agent("write-cache", "enable", "--what", "drive", "--slot", "0", "--yes",
                      "--json")
    assert json.loads(done.stdout)["command"] == planned
    assert host.modifies() == [" ".join(planned)]


def prompt(host: Host, *args: str, config: str | None = None) -> Terminal:
    extra = ["--config", config] if config else []
    child = Terminal([sys.executable, "-m", "smartarray_agent", *args, *host.common, *extra],
                     env=host.env, timeout=60)
    child.expect(r"Continue\? \[y/N\]")
    return child


@pytest.mark.parametrize("how", ["ctrl-c", "end of input", "hang-up"])
def test_leaving_the_prompt_sends_nothing_and_is_a_recorded_decline(tmp_path, how):
    host = Host(tmp_path, "gen9-battery")
    child = prompt(host, *NBWC_ON)
    if how == "ctrl-c":
        child.sendintr()
    elif how == "end of input":
        child.sendeof()
    else:
        child.kill(signal.SIGHUP)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 6, child.before
    assert host.modifies() == []
    assert outcomes(host) == [("outcome", "declined")]


def test_sigterm_during_the_write_lets_the_cli_finish_and_records_it(tmp_path):
    host = Host(tmp_path, "gen9-battery", faults={"command_delay_s": 1.0})
    child = Terminal([sys.executable, "-m", "smartarray_agent", *NBWC_ON, "--yes",
                      *host.common], env=host.env, timeout=60)
    deadline = time.monotonic() + 60
    while not any("nobatterywritecache" in c for i in read_invocations(host.state_dir)
                  for c in i.commands):
        assert time.monotonic() < deadline and child.isalive()
        time.sleep(0.05)  # polling the simulator's invocation log for the modify
    child.kill(signal.SIGTERM)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "SIGTERM arrived while the command ran" in child.before
    assert outcomes(host) == [("intent", None), ("outcome", "changed")]
    assert host.audit_entries()[-1]["interrupted"] == "SIGTERM"


def scenario_file(tmp_path: Path, name: str, battery_status: str) -> str:
    """Bundled scenario ``name`` with its first controller's backup power status replaced."""
    head, table, rest = resolve_scenario(name).read_text().partition(
        '[controllers.backup_power]\n')
    path = tmp_path / f"{name}-variant.toml"
    path.write_text(head + table + rest.replace('status = "OK"',
                                                f"status = {json.dumps(battery_status)}", 1))
    assert load_scenario(path).controllers[0].backup_power.status == battery_status
    return str(path)


def test_backup_power_ok_with_a_tail_is_not_healthy(tmp_path):
    host = Host(tmp_path, scenario_file(tmp_path, "gen9-battery", "OK (Charging)"))
    result = host.agent(*NBWC_ON, "--yes")
    assert result.returncode == 4, result.stderr
    assert "backup power is Batteries OK (Charging)" in result.stderr.replace("batteries",
                                                                                "Batteries")
    assert host.modifies() == []


def ilo_config(tmp_path: Path, address: str) -> str:
    path = tmp_path / "config.toml"
    credentials = fake.credentials_file(tmp_path)
    path.write_text(
        f'[redfish]\naddress = "{address}"\ncredentials_file = "{credentials}"\n'
        f'ca_file = "{fake.certificate()[0]}"\nconnect_timeout_s = 2\nread_timeout_s = 2\n')
    return str(path)


def test_a_charge_that_drops_while_the_prompt_waits_refuses_the_change(tmp_path):
    host = Host(tmp_path, "gen10")
    with fake.serve(fake.Ilo(fake.ilo5(batteries=[fake.battery_ilo5(charge=99)]))) as ilo:
        child = prompt(host, *NBWC_ON, config=ilo_config(tmp_path, ilo.address))
        ilo.resources[fake.CHASSIS]["Oem"]["Hpe"]["SmartStorageBattery"][0][
            "ChargeLevelPercent"] = 50
        child.sendline("y")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 4, child.before
    assert "charge 50%" in child.before
    assert host.modifies() == []
    assert outcomes(host) == [("outcome", "refused")]


def test_an_unreadable_ilo_refuses_an_enable_unless_the_operator_says_so(tmp_path):
    host = Host(tmp_path, "gen10")
    config = ilo_config(tmp_path, fake.closed_port())
    refused = host.agent(*NBWC_ON, "--yes", "--config", config)
    assert refused.returncode == 4, refused.stderr
    assert "the iLO could not be read" in refused.stderr
    assert "--without-ilo-charge" in refused.stderr
    assert host.modifies() == []
    disable = host.agent("write-cache", "disable", "--what", "drive", "--usage", "hba",
                         "--slot", "0", "--config", config)
    assert disable.returncode == 0, disable.stderr  # taking cache away needs no charge
    allowed = host.agent(*NBWC_ON, "--yes", "--config", config, "--without-ilo-charge")
    assert allowed.returncode == 0, allowed.stderr
    assert host.status()["cache"]["no_battery_write_cache"] is True
