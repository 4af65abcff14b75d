"""``simulate list``, ``simulate run`` and ``--simulate`` on status."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from smartarray_agent.simulator import list_scenarios


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


def _readme_interlock_demo() -> list[list[str]]:
    """The README's interlock demo, one argv (after the program) per line."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("Try the interlock:\n\n```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#", 1)[0])[1:] for line in block.splitlines()
            if line.strip()]


def test_the_readmes_interlock_demo_gives_the_same_answers_every_time(tmp_path):
    # issue #30, finding 2: the simulator keeps its state, and the demo worked once.
    audit = ["--audit-file", str(tmp_path / "audit.jsonl")]
    runs = []
    for _ in range(2):
        codes = []
        for argv in _readme_interlock_demo():
            extra = audit if argv[0] in ("set-cache-ratio", "write-cache") else []
            codes.append(agent(*argv, *extra, tmp_path=tmp_path).returncode)
        runs.append(codes)
    assert runs[0] == runs[1] == [0, 4, 0, 0]


def test_reset_forgets_a_change_and_says_what_it_reset(tmp_path):
    assert agent("simulate", "run", "gen9-battery", "--", "ctrl", "slot=0", "modify",
                 "cacheratio=50/50", tmp_path=tmp_path).returncode == 0
    shown = agent("status", "--simulate", "gen9-battery", tmp_path=tmp_path).stdout
    assert "50% read / 50% write" in shown
    reset = agent("simulate", "reset", "gen9-battery", tmp_path=tmp_path)
    assert reset.returncode == 0 and reset.stdout == f"reset {tmp_path / 'sim'}\n"
    again = agent("simulate", "reset", tmp_path=tmp_path)
    assert again.returncode == 0 and again.stdout == "nothing to reset\n"
    assert "10% read / 90% write" in agent("status", "--simulate", "gen9-battery",
                                           tmp_path=tmp_path).stdout
    assert agent("simulate", "reset", "no-such-scenario", tmp_path=tmp_path).returncode == 2


def test_reset_refuses_while_a_simulator_of_that_host_runs(tmp_path):
    agent("simulate", "run", "gen9-battery", "--", "ctrl", "all", "show", tmp_path=tmp_path)
    with open(tmp_path / "sim" / "instance.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = agent("simulate", "reset", "gen9-battery", tmp_path=tmp_path)
    assert busy.returncode == 1
    assert "a simulator process of" in busy.stderr and "not reset under it" in busy.stderr
    assert (tmp_path / "sim" / "state.json").exists()
