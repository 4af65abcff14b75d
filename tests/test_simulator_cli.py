"""The simulator as a program: argv and console modes, modify commands and their state. Its
``main`` answers in this process (tests/sim_cli.py); the program runs as a process where the
process is the subject: argv mode once, and the console in a terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.simulator import resolve_scenario, vendor_argv
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.session import Session
from smartarray_agent.simulator.state import StateStore

from .agent_cli import Ran
from .sim_cli import sim as run_sim
from .terminal import Terminal

BY_GENERATION = {
    "hpacucli9": "hpacucli-legacy",
    "hpssacli2": "recharging",
    "ssacli3": "two-controllers",
    "ssacli-gen10": "gen10",
}
# What the agent sends, and the two cheap ones tests use; the drive commands (ld, pd) are not
# answered: the agent never sends them.
SHOW_COMMANDS = [
    "ctrl all show config detail",
    "ctrl all show detail",
    "ctrl all show status",
    "ctrl all show",
    "ctrl slot=0 show detail",
    "ctrl slot=0 show",
    "ctrl slot=0 show status",
    "ctrl slot=0 show config detail",
]


def sim(state: Path, scenario: str, *words: str, stdin: str = "", faults: dict | None = None,
        ) -> Ran:
    """Run the simulator once, like the vendor binary (in this process)."""
    env = {**os.environ, "SMARTARRAY_SIM_FAULTS": json.dumps(faults or {})}
    return run_sim("--scenario", scenario, "--state-dir", state, *words, stdin=stdin, env=env)


def console(state: Path, scenario: str) -> Terminal:
    child = Terminal(vendor_argv(scenario, state), timeout=10)
    child.expect_exact("=> ")
    return child


def answer(scenario: str, line: str, tmp_path: Path) -> tuple[str, int | None]:
    """One command through the simulator's session code, in this process."""
    path = resolve_scenario(scenario)
    store = StateStore(tmp_path / scenario, path)
    out = io.BytesIO()
    loaded, _ = store.load()
    session = Session(store, DIALECTS[loaded.generation], loaded.faults, out, sys.stdin, "t")
    code = session.execute(line.split())
    return out.getvalue().decode(), code


@pytest.mark.parametrize("scenario", BY_GENERATION.values())
@pytest.mark.parametrize("command", SHOW_COMMANDS)
def test_every_show_command_answers_what_the_parser_reads(scenario, command, tmp_path):
    text, code = answer(scenario, command, tmp_path)
    assert code == 0
    assert text.startswith("\n") and text.endswith("\n")
    snapshot = parse(text)
    assert snapshot.error is None and snapshot.controllers
    assert all(c.model for c in snapshot.controllers)


def test_argv_mode_prints_the_configuration(tmp_path):
    """The program itself, as the agent starts it."""
    done = subprocess.run([*vendor_argv("gen9-battery", tmp_path), "ctrl", "all", "show",
                           "config", "detail"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert "\nSmart Array P440ar in Slot 0 (Embedded)\n   Bus Interface: PCI\n" in done.stdout
    assert "   Battery/Capacitor Status: OK\n" in done.stdout
    assert "      Logical Drive: 2\n" in done.stdout


def test_version_and_errors_exit_like_the_vendor_cli(tmp_path):
    version = sim(tmp_path, "hpacucli-legacy", "version")
    assert version.stdout == "\n   ACU CLI Version: 9.40.12.0\n   SoulAPI Version: 6.2.25.0\n\n"
    wrong = sim(tmp_path, "hpacucli-legacy", "ctrl", "slot=0", "show", "config", "details")
    assert (wrong.returncode, wrong.stdout) == (1, '\nError: Syntax error at "details"\n\n')
    drives = sim(tmp_path, "hpacucli-legacy", "ctrl", "slot=0", "ld", "all", "show")
    assert (drives.returncode, drives.stdout) == (1, '\nError: Syntax error at "show"\n\n')
    missing = sim(tmp_path, "hpacucli-legacy", "ctrl", "slot=7", "show")
    assert missing.returncode == 1 and 'Invalid target syntax. "7"' in missing.stdout
    no_lds = sim(tmp_path, "hba-mode", "ctrl", "slot=0", "ld", "all", "modify", "caching=enable")
    assert "Error: The specified device does not have any logical drives." in no_lds.stdout


def test_console_mode_banner_prompt_target_and_exit(tmp_path):
    child = console(tmp_path, "gen9-battery")
    assert child.before.splitlines() == [
        "Smart Storage Administrator CLI 3.10.3.0",
        "Detecting Controllers...Done.",
        'Type "help" for a list of supported commands.',
        'Type "exit" to close the console.',
        "",
    ]
    child.sendline("ctrl all show status")
    child.expect_exact("=> ")
    assert "   Battery/Capacitor Status: OK\r\n\r\n" in child.before
    child.sendline("set target controller slot=0")
    child.expect_exact("=> ")
    assert child.before.endswith('\r\n\r\n   "controller slot=0"\r\n\r\n')
    child.sendline("show status")
    child.expect_exact("=> ")
    assert child.before.startswith("show status\r\n\r\nSmart Array P440ar in Slot 0")
    child.sendline("ctrl slot=0 show bogus")
    child.expect_exact("=> ")
    assert 'Error: Syntax error at "bogus"' in child.before
    child.sendline("modify cacheratio=50/50")
    child.expect_exact("=> ")
    assert child.before.strip() == "modify cacheratio=50/50"  # the echo only: no output
    child.sendline("exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "show")
    assert "   Cache Ratio: 50% Read / 50% Write\n" in shown.stdout


def test_modify_persists_and_the_next_invocation_sees_it(tmp_path):
    for words in (["cacheratio=25/75"], ["nobatterywritecache=enable"]):
        done = sim(tmp_path, "gen8-capacitor", "ctrl", "slot=0", "modify", *words)
        assert (done.returncode, done.stdout) == (0, "")
    shown = sim(tmp_path, "gen8-capacitor", "ctrl", "all", "show", "detail").stdout
    assert "   Cache Ratio: 25% Read / 75% Write\n" in shown
    assert "   No-Battery Write Cache: Enabled\n" in shown
    saved = json.loads((tmp_path / "state.json").read_text())
    assert saved["state"]["controllers"][0]["cache"]["read_percent"] == 25
    untouched = sim(tmp_path / "other", "gen8-capacitor", "ctrl", "slot=0", "show").stdout
    assert "   Cache Ratio: 10% Read / 90% Write\n" in untouched


def test_a_changed_scenario_file_starts_a_new_state(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(resolve_scenario("gen9-battery").read_text())
    sim(tmp_path / "s", str(path), "ctrl", "slot=0", "modify", "cacheratio=50/50")
    path.write_text(path.read_text().replace("P440ar", "P840ar"))
    shown = sim(tmp_path / "s", str(path), "ctrl", "slot=0", "show").stdout
    assert "P840ar" in shown and "10% Read / 90% Write" in shown


def test_bad_values_get_the_vendor_error_and_the_options(tmp_path):
    done = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "modify", "cacheratio=33/67")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1] == 'Error: "cacheratio=33/67" is not a valid option for controller slot=0'
    assert lines[3] == "Available options are:" and "       35/65" in lines
    query = sim(tmp_path, "hpacucli-legacy", "ctrl", "slot=0", "modify", "cacheratio=?")
    assert query.returncode == 0
    assert query.stdout.splitlines()[2:7] == [
        "       0/100", "       25/75 (current value)", "       50/50", "       75/25",
        "       100/0",
    ]  # fmt: skip
    unknown = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "modify", "turbo=on")
    assert unknown.stdout == '\nError: Syntax error at "turbo"\n\n'


WARNING_END = "         Continue? (y/n) "


@pytest.mark.parametrize(
    ("stdin", "words", "enabled"),
    [
        ("", [], False),  # no answer: EOF counts as no
        ("n\n", [], False),
        ("y\n", [], True),
        ("", ["forced"], True),
    ],
)
def test_drive_write_cache_asks_unless_forced(tmp_path, stdin, words, enabled):
    done = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "modify", "dwc=enable", *words,
               stdin=stdin)  # fmt: skip
    assert done.returncode == 0
    assert (WARNING_END in done.stdout) is not bool(words)
    if not words:
        assert done.stdout.startswith("\nWarning: Without the proper safety precautions")
    shown = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "show").stdout
    assert f"   Drive Write Cache: {'Enabled' if enabled else 'Disabled'}\n" in shown


def test_the_console_confirmation_takes_y_or_n(tmp_path):
    child = console(tmp_path, "hpacucli-legacy")
    child.sendline("ctrl slot=0 modify drivewritecache=enable")
    child.expect_exact(WARNING_END)
    assert "drives could cause data loss in the event of power failure. To ensure" in child.before
    child.sendline("n")
    child.expect_exact("=> ")
    child.sendline("ctrl slot=0 show")
    child.expect_exact("=> ")
    assert "Drive Write Cache: Disabled" in child.before
    child.sendline("ctrl slot=0 modify drivewritecache=enable")
    child.expect_exact(WARNING_END)
    child.sendline("y")
    child.expect_exact("=> ")
    child.sendline("ctrl slot=0 show")
    child.expect_exact("=> ")
    assert "Drive Write Cache: Enabled" in child.before
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_gen10_drive_write_cache_needs_a_usage(tmp_path):
    done = sim(tmp_path, "gen10", "ctrl", "slot=0", "modify", "dwc=enable")
    assert (done.returncode, done.stdout) == (
        1,
        '\nError: Parameter "usage" must be specified.\n\n',
    )
    done = sim(tmp_path, "gen10", "ctrl", "slot=0", "modify", "dwc=enable", "usage=configured",
               "forced")  # fmt: skip
    assert done.returncode == 0
    shown = sim(tmp_path, "gen10", "ctrl", "slot=0", "show").stdout
    assert "   Configured Drive Write Cache Policy: Enable\n" in shown
    assert "   Unconfigured Drive Write Cache Policy: Default\n" in shown
    old = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "modify", "dwc=disable", "usage=hba")
    assert 'Syntax error at "usage"' in old.stdout


def test_logical_drive_caching_uses_each_generation_s_word(tmp_path):
    done = sim(tmp_path / "a", "hpacucli-legacy", "ctrl", "slot=0", "ld", "1", "modify",
               "arrayaccelerator=disable")  # fmt: skip
    assert done.returncode == 0
    shown = sim(tmp_path / "a", "hpacucli-legacy", "ctrl", "slot=0", "show", "config", "detail")
    assert "         Array Accelerator: Disabled\n" in shown.stdout
    refused = sim(tmp_path / "a", "hpacucli-legacy", "ctrl", "slot=0", "ld", "1", "modify",
                  "caching=enable")  # fmt: skip
    assert 'Syntax error at "caching"' in refused.stdout
    sim(tmp_path / "b", "gen9-battery", "ctrl", "slot=0", "ld", "2", "modify", "caching=disable")
    shown = sim(tmp_path / "b", "gen9-battery", "ctrl", "slot=0", "show", "config",
                "detail").stdout
    block = shown.split("      Logical Drive: 2\n")[1].split("\n\n")[0]  # its block alone
    assert "         Caching:  Disabled\n" in block
    assert "         LD Acceleration Method: All disabled" in block


def test_ignore_modify_answers_but_changes_nothing(tmp_path):
    done = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "modify", "cacheratio=50/50",
               faults={"ignore_modify": True})  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    shown = sim(tmp_path, "gen9-battery", "ctrl", "slot=0", "show").stdout
    assert "   Cache Ratio: 10% Read / 90% Write\n" in shown


def test_state_directory_defaults_to_the_runtime_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)
    assert run_sim("--scenario", "gen10", "version", env=env).returncode == 0
    assert (tmp_path / "smartarray-sim" / "gen10" / "state.json").is_file()
    env["SMARTARRAY_SIM_STATE_DIR"] = str(tmp_path / "chosen")
    env["SMARTARRAY_SIM_SCENARIO"] = "gen10"
    assert run_sim("version", env=env).returncode == 0
    assert (tmp_path / "chosen" / "invocations.jsonl").is_file()


def test_a_bad_scenario_is_exit_2_with_the_reason(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('description = "x"\ngeneration = "ssacli9"\n')
    done = sim(tmp_path, str(path), "ctrl", "all", "show")
    assert done.returncode == 2 and "generation" in done.stderr and done.stdout == ""


@pytest.mark.skipif(os.geteuid() != 0, reason="the trust rule applies to root")
def test_root_refuses_a_scenario_file_another_user_could_change(tmp_path):
    """As the agent's configuration does: root acts on no file another user wrote."""
    path = tmp_path / "theirs.toml"
    path.write_text(resolve_scenario("gen9-battery").read_text())
    os.chown(path, 65534, 65534)
    done = sim(tmp_path / "state", str(path), "ctrl", "all", "show")
    assert (done.returncode, done.stdout) == (2, "")
    assert f"{path}: refused: {path} belongs to uid 65534, not root" in done.stderr
    os.chown(path, 0, 0)
    assert sim(tmp_path / "state", str(path), "ctrl", "all", "show").returncode == 0
