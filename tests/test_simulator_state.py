"""The simulator answers from its scenario's models, kept in its state directory: a console
session prints what it always printed, every modify leaves a scenario the schema accepts,
and a state another version saved keeps its changes or is made again."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib

import pytest

from smartarray_agent.collectors.simulator import list_scenarios, resolve_scenario
from smartarray_agent.collectors.simulator import scenario as schema
from smartarray_agent.collectors.simulator.commands import CommandError, parse
from smartarray_agent.collectors.simulator.dialect import DIALECTS
from smartarray_agent.collectors.simulator.modify import apply, plan
from smartarray_agent.collectors.simulator.scenario import load_scenario

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
# simulator printed it before it answered from the plain form (commit eea1ad4 + 2). A change
# meant to alter the output updates these with the printed digest.
CONSOLE_SHA256 = {
    "failed-battery": "fac2ea35c311428f23a1d9181c2ff09e6901f282343abfafdf1e7942092d3469",
    "gen10": "23a78effde809de6e8f62ac9050b906444da5057f40e173e7e2f9079294ae8e7",
    "gen8-capacitor": "b3f4a6fc625ba7a72d167ca49a7bf67c43d5b2aab358a0567190b8608db3bb7b",
    "gen9-battery": "4410832eb0671e217fabc8348cedf215c533469a83db1ba55a6fd92e5bd014c8",
    "hba-mode": "74c066b311d4f62010c7aa0f72fac90c854642dc964d8ea23b85e0524519e679",
    "hpacucli-legacy": "9c19670c8d1d0c9b2eaf0ac07a04d01d9a492a4fbac24ddfa4329d94dc05f499",
    "large": "7cb7f810f99c9c9b26295e32f0dabbc4238e93b8b1e39226b12ecd146710b78e",
    "no-cache-module": "72c25179471d783d486963e0b5eed5ce7d81dc2feea8d85aae7a43459531ebc5",
    "recharging": "9760764a4d3a08a087ff4fcd26b9204d376fad33d80b3416f5bf32328c64363a",
    "two-controllers": "972bfd1eb55dc04a85457da40a246bc530bf2f287ead581aa51c6f2967641e5f",
    "unsafe-nbwc": "e5ce7f77b3e852e32d4ce8ecc9627b8f1288dbf8a4418519c67834c7a476aac8",
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


def _sim(tmp_path, *args: str, stdin: str = "", importtime: bool = False):
    flags = ["-X", "importtime"] if importtime else []
    argv = [sys.executable, *flags, "-m", "smartarray_agent.collectors.simulator",
            "--state-dir", str(tmp_path / "state"), *args]  # fmt: skip
    return subprocess.run(argv, input=stdin.encode(), capture_output=True, timeout=60)


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
