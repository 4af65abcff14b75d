"""``status`` with a ``[redfish]`` table in its configuration, as a user runs it: a real
process, a fake iLO on loopback."""

from __future__ import annotations

import json
import subprocess
import sys

from .agent_cli import agent
from .redfish_ilo import (
    PASSWORD,
    Ilo,
    battery_ilo5,
    certificate,
    closed_port,
    credentials_file,
    ilo5,
    serve,
)


def config(tmp_path, address: str, extra: str = "") -> str:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[redfish]\naddress = "{address}"\ncredentials_file = "{credentials_file(tmp_path)}"\n'
        f'ca_file = "{certificate()[0]}"\nconnect_timeout_s = 2\nread_timeout_s = 2\n{extra}'
    )
    return str(path)


def test_status_shows_the_ilo_charge_in_table_and_json(tmp_path):
    with serve(Ilo(ilo5(batteries=[battery_ilo5(charge=87)]))) as ilo:
        cfg = config(tmp_path, ilo.address)
        table = agent("status", "--simulate", "gen10", "--config", cfg)
        as_json = agent("status", "--json", "--simulate", "gen10", "--config", cfg)
    assert table.returncode == 0, table.stderr
    assert "batteries x1, OK, charge 87%" in table.stdout
    assert as_json.returncode == 0, as_json.stderr
    power = json.loads(as_json.stdout)["controllers"][0]["backup_power"]
    assert (power["status"], power["charge_percent"]) == ("ok", 87.0)
    assert ilo.logins == ilo.logouts and len(ilo.logins) == 2


def test_an_unreachable_ilo_is_a_warning_and_status_still_works(tmp_path):
    result = agent("status", "--simulate", "gen10", "--config",
                   config(tmp_path, closed_port()))
    assert result.returncode == 0
    assert "batteries x1, OK\n" in result.stdout
    assert result.stderr.startswith("smartarray-agent: warning: no battery charge from the iLO: "
                                    "cannot connect to 127.0.0.1:")
    assert result.stderr.count("\n") == 1 and PASSWORD not in result.stderr


def test_a_bad_redfish_config_is_bad_input(tmp_path):
    result = agent("status", "--simulate", "gen10", "--config",
                   config(tmp_path, "ilo", extra="colour = 'blue'\n"))
    assert result.returncode == 2
    assert "config.toml:7: redfish.colour:" in result.stderr
    assert result.stdout == ""


def _saved_capture(tmp_path) -> str:
    """``ctrl all show config detail`` of the gen10 scenario, saved as an operator saves
    another host's output (README: ``ssh box2 sudo ssacli ... | status --input -``)."""
    state = tmp_path / "sim"
    answer = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "simulate", "run", "gen10",
         "--state-dir", str(state), "ctrl", "all", "show", "config", "detail"],
        capture_output=True, text=True, timeout=60, check=True)
    path = tmp_path / "box2.txt"
    path.write_text(answer.stdout)
    return str(path)


def test_a_saved_capture_is_not_given_this_hosts_ilo_charge(tmp_path):
    """The capture may come from another host: the local iLO's charge is not its charge.
    status and check --input show what the capture says, and never ask the iLO."""
    capture = _saved_capture(tmp_path)
    with serve(Ilo(ilo5(batteries=[battery_ilo5(charge=87)]))) as ilo:
        cfg = config(tmp_path, ilo.address)
        as_json = agent("status", "--json", "--input", capture, "--config", cfg)
        table = agent("status", "--input", capture, "--config", cfg)
        check = agent("check", "--input", capture, "--config", cfg)
    assert as_json.returncode == 0, as_json.stderr
    power = json.loads(as_json.stdout)["controllers"][0]["backup_power"]
    assert power["charge_percent"] is None
    assert table.returncode == 0, table.stderr
    assert "charge 87%" not in table.stdout
    assert "87" not in check.stdout
    assert ilo.logins == []
