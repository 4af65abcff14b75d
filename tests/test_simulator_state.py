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

# Every command the simulator answers, its errors and its modifies (which persist, so the
# shows after them print the changed state); {s} is the first slot, {pd} its first drive.
COMMANDS = """\
ctrl all show
ctrl all show status
ctrl all show detail
ctrl all show config
ctrl all show config detail
ctrl slot={s} show
ctrl slot={s} show detail
ctrl slot={s} show status
ctrl slot={s} show config
ctrl slot={s} show config detail
ctrl slot={s} ld all show
ctrl slot={s} ld all show detail
ctrl slot={s} ld all show status
ctrl slot={s} ld 1 show
ctrl slot={s} ld 9 show
ctrl slot={s} pd all show
ctrl slot={s} pd all show detail
ctrl slot={s} pd all show status
ctrl slot={s} pd {pd} show
ctrl slot={s} pd {pd} show status
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
# help listing its own table of modify forms (simulator/modify.py). A change meant to alter
# the output updates these with the printed digest.
CONSOLE_SHA256 = {
    "failed-battery": "516560c08965874bfd170e75512888fe424ace22753b4d8463f97b9e5cfdf39c",
    "gen10": "8ae544dffc1640cf83bb5e4bde170f7b207aba522301db0729c5c4b79e9a8445",
    "gen8-capacitor": "7d0a422528f542d3a03f23387638654f5d251553d5d6f31f0ebc75a0503c2207",
    "gen9-battery": "4c4f6b08188c78edaf06d3eacf15762389fa4912935ac25a18d6ecc62187cbfd",
    "hba-mode": "e788f9d0a9028f32f4de0fc3ed6f607b3d355628bd33e47a7ff177f4718223cc",
    "hpacucli-legacy": "0af990d8b447c129f40e1bbadf7d439cb548f50e7b0b6c0f14381f8424b9abf4",
    "large": "3d700ede5b591030da1e976b8a97a8c34b3566ea3ea1f8af5abf2175fb93d116",
    "no-cache-module": "e71d436e2189a94bae8dafef8b04f96477fffeac4d02e89cec7dc6d645535480",
    "recharging": "8af698d873aff91a24a37ffde5e7206cdafdce258f7ddaf5d9fe4ef2501760b2",
    "two-controllers": "044c043f2ccb6fb8829b0106e8b0895bfcd3cc08df01c6f23ca1c39ba52685d8",
    "unsafe-nbwc": "b3a189076491f92432678e992b1e510de557c02943d0c4d5f4356aba3f2c256f",
}

NAMES = [name for name, _ in list_scenarios()]


def console_script(name: str) -> str:
    """COMMANDS for scenario ``name``, after a ``set target`` and two target-less commands."""
    data = tomllib.loads(resolve_scenario(name).read_text(encoding="utf-8"))
    ctrl = (data.get("controllers") or [{"slot": "0"}])[0]
    drives = ctrl.get("physical_drives") or [{"id": "1I:1:1"}]
    lines = [line.format(s=ctrl["slot"], pd=drives[0]["id"]) for line in COMMANDS]
    lines = [f"set target ctrl slot={ctrl['slot']}", "show", "ld all show", *lines, "exit"]
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
