"""``simulate list``, ``simulate run`` and ``--simulate`` on status."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from smartarray_agent.collectors.simulator import list_scenarios


def agent(*args: str, tmp_path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(tmp_path / "sim"))
    env.pop("SMARTARRAY_SIM_FAULTS", None)
    return subprocess.run([sys.executable, "-m", "smartarray_agent", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def test_list_prints_one_scenario_per_line_name_first(tmp_path):
    result = agent("simulate", "list", tmp_path=tmp_path)
    assert result.returncode == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert names == [name for name, _ in list_scenarios()]
    assert {"gen9-battery", "failed-battery", "unsafe-nbwc", "large"} <= set(names)


def test_run_answers_a_vendor_command(tmp_path):
    result = agent("simulate", "run", "gen10", "--", "ctrl", "all", "show", tmp_path=tmp_path)
    assert result.returncode == 0
    assert "HPE Smart Array P408i-a SR Gen10 in Slot 0 (Embedded)" in result.stdout


def test_run_without_words_is_the_console(tmp_path):
    result = agent("simulate", "run", "gen8-capacitor", tmp_path=tmp_path,
                   stdin="ctrl all show status\nexit\n")
    assert result.returncode == 0
    assert result.stdout.count("=> ") == 2
    assert "Battery/Capacitor Status: OK" in result.stdout


@pytest.mark.parametrize("scenario", [name for name, _ in list_scenarios()])
def test_status_reads_every_bundled_scenario(tmp_path, scenario):
    result = agent("status", "--json", "--simulate", scenario, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["controllers"]


def test_an_unknown_scenario_names_the_bundled_ones(tmp_path):
    result = agent("status", "--simulate", "gen11", tmp_path=tmp_path)
    assert result.returncode == 2
    assert "gen9-battery" in result.stderr


def test_a_simulated_host_has_its_own_lock_beside_its_state(tmp_path):
    """With --simulate the default host lock is the simulated host's, so a demo or a test
    never takes (nor leaves) the real host's /run/smartarray-agent/cli.lock."""
    result = agent("status", "--simulate", "gen9-battery", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "sim" / "cli.lock").is_file()
