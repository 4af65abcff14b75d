"""The simulator answers from its scenario's models, kept in its state directory: a console
session prints what it always printed, every modify leaves a scenario the schema accepts,
and a state another version saved keeps its changes or is made again."""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass

import pytest

from smartarray_agent.simulator import list_scenarios, resolve_scenario
from smartarray_agent.simulator import scenario as schema
from smartarray_agent.simulator.commands import CommandError, parse
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.modify import apply, plan
from smartarray_agent.simulator.scenario import ScenarioError, load_scenario
from smartarray_agent.simulator.state import make_state_dir

from .sim_cli import sim_bytes

# Every command the simulator answers, its errors (a drive show, a show config without
# detail: commands the agent never sends) and its modifies (which persist, so the shows after
# them print the changed state); {s} is the first slot.
COMMANDS = """\
ctrl all show
ctrl all show status
ctrl all show detail
ctrl all show config detail
ctrl slot={s} show
ctrl slot={s} show detail
ctrl slot={s} show status
ctrl slot={s} show config detail
ctrl slot={s} show config
ctrl slot={s} ld all show
ctrl slot={s} pd all show
version
help
ctrl slot=99 show
bogus words
ctrl slot={s} show bogus
ctrl slot={s} modify cacheratio=?
ctrl slot={s} modify nobatterywritecache=?
ctrl slot={s} modify drivewritecache=?
ctrl slot={s} modify drivewritecache=? usage=configured
ctrl slot={s} modify cacheratio=50/50
ctrl slot={s} modify cacheratio=33/67
ctrl slot={s} modify nobatterywritecache=enable
ctrl slot={s} modify drivewritecache=enable
ctrl slot={s} modify drivewritecache=enable forced
ctrl slot={s} modify drivewritecache=disable usage=configured forced
ctrl slot={s} modify drivewritecache=enable usage=hba forced
ctrl slot={s} ld all modify caching=disable
ctrl slot={s} ld 1 modify arrayaccelerator=enable
ctrl slot={s} ld all modify caching=?
ctrl all modify cacheratio=50/50
ctrl slot={s} pd all modify caching=enable
ctrl slot={s} show config detail
ctrl all show status""".splitlines()

# sha256 of (exit code, stdout, stderr) of one console session running COMMANDS, as the
# simulator printed it before it answered from the plain form (commit eea1ad4 + 2), with its
# help listing its own table of modify forms (simulator/modify.py), and the drive shows and a
# show config without detail refused (issue #52; the rest compared byte for byte). A change
# meant to alter the output updates these with the printed digest.
CONSOLE_SHA256 = {
    "failed-battery": "879ac34df3298e29e305050897ca5609a7028f8882ce1ac39c55eeb12f823610",
    "gen10": "8db58497f3ebc99833c14ec5347e393f264a8e3a49be31ee0b45a1eb9fc24cd1",
    "gen8-capacitor": "8f2445d8aba2dbd1fb524fb27d3cb1cdb76958f615b12eea6b39fd5d60c30658",
    "gen9-battery": "fa85b0ed185550336e12ce29219053a4708cc77fb648779763eb65bbb84f9f2a",
    "hba-mode": "5c47b03568cb55ccea21f021dc9b676a77221703a2167d6019c3777f8b92543a",
    "hpacucli-legacy": "22c525307d494c47e038aaca3b4abb2246a349906564ceb32136b41c79499f47",
    "large": "1987e21fb9bed170fb8348cd632aa280ab497f65cdd71290e8c0a7394185b89e",
    "no-cache-module": "caa78606265e3576ab9070f1016aa0cec057c7fa428de6fd0f0cca436d7e68a8",
    "recharging": "53845c07f0dfc10bb701fd50a649b0beb9a9fe9a9f1ac634a1bc976d70975dbc",
    "two-controllers": "bfb022a7519b5f6efd10a0b5a8f63068af8730089c8f2f52c36f7ba376eaa371",
    "unsafe-nbwc": "b7dacbd8841b9213365d558580b0684f5a54ad60ad311a61fd77370bcff08827",
}

NAMES = [name for name, _ in list_scenarios()]


def console_script(name: str) -> str:
    """COMMANDS for scenario ``name``, after a ``set target`` and two target-less commands."""
    data = tomllib.loads(resolve_scenario(name).read_text(encoding="utf-8"))
    ctrl = (data.get("controllers") or [{"slot": "0"}])[0]
    lines = [line.format(s=ctrl["slot"]) for line in COMMANDS]
    lines = [f"set target ctrl slot={ctrl['slot']}", "show", "show status", *lines, "exit"]
    return "".join(f"{line}\n" for line in lines)


def digest(code: int, stdout: bytes, stderr: bytes) -> str:
    return hashlib.sha256(b"%d\0%s\0%s" % (code, stdout, stderr)).hexdigest()


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: bytes
    stderr: bytes


def _sim(tmp_path, *args: str, stdin: str = "") -> Done:
    """The simulator's program, in this process (tests/sim_cli.py)."""
    code, out, err = sim_bytes("--state-dir", tmp_path / "state", *args, stdin=stdin)
    return Done(code, out, err.encode())


MODIFIES = [
    "ctrl slot={s} modify cacheratio=50/50",
    "ctrl slot={s} modify nobatterywritecache=enable",
    "ctrl slot={s} modify drivewritecache=enable forced",
    "ctrl slot={s} modify drivewritecache=enable usage=unconfigured forced",
    "ctrl slot={s} modify drivewritecache=default usage=hba forced",
    "ctrl slot={s} ld all modify caching=disable",
    "ctrl slot={s} ld 1 modify arrayaccelerator=disable",
]


@pytest.mark.parametrize("name", NAMES)
def test_every_modify_leaves_a_scenario_the_schema_accepts_unchanged(name: str) -> None:
    """apply() sets attributes without validation: what plan() lets through must be valid."""
    state = load_scenario(resolve_scenario(name))
    d = DIALECTS[state.generation]
    applied = 0
    for ctrl in state.controllers:
        for line in MODIFIES:
            try:
                result = plan(ctrl, d, parse(line.format(s=ctrl.slot).split()))
            except CommandError:  # refused by this controller or generation: nothing to apply
                continue
            new = apply(state, result.changes)
            data = new.model_dump(mode="json")
            assert schema.Scenario.model_validate(data).model_dump(mode="json") == data
            applied += bool(result.changes)
    assert applied or not any(c.cache.present for c in state.controllers)


@pytest.mark.parametrize("name", NAMES)
def test_a_console_session_prints_what_it_printed_before(name: str, tmp_path) -> None:
    done = _sim(tmp_path, "--scenario", name, stdin=console_script(name))
    got = digest(done.returncode, done.stdout, done.stderr)
    assert got == CONSOLE_SHA256[name], (got, done.stdout.decode(errors="replace")[-2000:])


def test_a_state_another_version_saved_keeps_its_changes_or_is_made_again(tmp_path) -> None:
    """An older simulator's state.json (a field fewer) is validated again and keeps its
    changes; one that does not validate is made again from the scenario file."""
    words = ["--scenario", "gen9-battery"]
    assert _sim(tmp_path, *words, "ctrl", "slot=0", "modify", "cacheratio=50/50").returncode == 0
    state_file = tmp_path / "state" / "state.json"
    saved = json.loads(state_file.read_text())
    del saved["state"]["faults"]["prompt"]
    state_file.write_text(json.dumps(saved))
    shown = _sim(tmp_path, *words, "ctrl", "slot=0", "show")
    assert shown.returncode == 0, shown.stderr
    assert b"Cache Ratio: 50% Read / 50% Write" in shown.stdout
    saved = json.loads(state_file.read_text())
    saved["state"]["faults"]["colour"] = "blue"
    state_file.write_text(json.dumps(saved))
    shown = _sim(tmp_path, *words, "ctrl", "slot=0", "show")
    assert shown.returncode == 0, shown.stderr
    assert b"Cache Ratio: 10% Read / 90% Write" in shown.stdout  # the file's ratio


def test_a_state_directory_may_be_made_in_a_sticky_directory_but_not_be_one(tmp_path):
    """Like /tmp: a directory of one's own is made in it and checked as one's own; the
    sticky directory itself holds no state, anyone could plant a link there (issue 39
    item 7)."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    made = make_state_dir(sticky / "sim" / "gen10")
    assert made == sticky / "sim" / "gen10" and made.is_dir()
    assert oct(made.stat().st_mode & 0o777) == oct(0o700)
    with pytest.raises(ScenarioError, match="is writable by everyone"):
        make_state_dir(sticky)
