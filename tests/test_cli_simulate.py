"""``simulate list``, ``simulate run`` and ``--simulate`` on status. The commands run in this
process (tests/agent_cli.py), but ``simulate run``: the simulator is a program of its own (its
signal handlers, its instance lock), so it runs as a process."""

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

from .agent_cli import Ran, spawn
from .agent_cli import agent as in_process


def agent(*args: str, tmp_path, stdin: str | None = None) -> Ran:
    env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(tmp_path / "sim"))
    env.pop("SMARTARRAY_SIM_FAULTS", None)
    run = spawn if args[:2] == ("simulate", "run") else in_process
    return run(*args, env=env, stdin=stdin)


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


OTHER_UID = 65534  # nobody: a user whose runtime directory root was given


@pytest.mark.skipif(os.geteuid() != 0, reason="the question is root's")
def test_root_refuses_a_users_runtime_directory_and_follows_none_of_its_links(tmp_path):
    """Issue 39 item 7: root with a user's XDG_RUNTIME_DIR (su without -) created a file
    where the user's instance.lock link pointed, and appended through their
    invocations.jsonl link to a root-only file. Both commands refuse the directory."""
    runtime = tmp_path / "run-user"
    hosts = runtime / "smartarray-sim"
    for scenario in ("gen9-battery", "gen10"):
        (hosts / scenario).mkdir(parents=True)
    (hosts / "gen9-battery" / "state.json").write_text("{}")  # something to reset
    root_only = tmp_path / "root-only"
    root_only.write_text("root's own\n")
    root_only.chmod(0o600)
    for scenario in ("gen9-battery", "gen10"):
        (hosts / scenario / "instance.lock").symlink_to(tmp_path / f"made-{scenario}")
        (hosts / scenario / "invocations.jsonl").symlink_to(root_only)
    for path in (runtime, *runtime.rglob("*")):
        os.lchown(path, OTHER_UID, OTHER_UID)
    runtime.chmod(0o700)
    env = {key: value for key, value in os.environ.items()
           if key not in ("SMARTARRAY_SIM_STATE_DIR", "SMARTARRAY_SIM_FAULTS")}
    env["XDG_RUNTIME_DIR"] = str(runtime)

    reset = subprocess.run([sys.executable, "-m", "smartarray_agent", "simulate", "reset",
                            "gen9-battery"], capture_output=True, text=True, env=env,
                           timeout=60)
    simulated = subprocess.run([str(Path(sys.executable).with_name("smartarray-sim")),
                                "--scenario", "gen10", "ctrl", "all", "show"],
                               capture_output=True, text=True, env=env, timeout=60)
    assert reset.returncode == 2 and "belongs to uid 65534" in reset.stderr, reset
    assert simulated.returncode == 2 and "belongs to uid 65534" in simulated.stderr, simulated
    assert not list(tmp_path.glob("made-*"))
    assert root_only.read_text() == "root's own\n"
    assert (hosts / "gen9-battery" / "state.json").read_text() == "{}"
    assert sorted(path.name for path in (hosts / "gen10").iterdir()) == [
        "instance.lock", "invocations.jsonl"]
