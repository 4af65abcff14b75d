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

from smartarray_agent.simulator import list_scenarios, resolve_scenario
from smartarray_agent.simulator import scenario as schema
from smartarray_agent.simulator.commands import CommandError, parse
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.modify import apply, plan
from smartarray_agent.simulator.scenario import load_scenario

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
# help listing the kinds table's forms. A change meant to alter the output updates these
# with the printed digest.
CONSOLE_SHA256 = {
    "failed-battery": "bac050bfa05cd60550eabacd4b84cb4a955ff49bb103aa2c0d23e4739369cad1",
    "gen10": "857df4b0fe4a79654991fcbe4deaaa60dbcdabd2e93dbf15e8d88fb00d7e371e",
    "gen8-capacitor": "1e2b783daa03b8deb1982c3480546fb614277298cef00805628d87c3f9449810",
    "gen9-battery": "93614c778f400396fca529f4c6dd73b054173ab626fb08f0b443a9b60ac622f0",
    "hba-mode": "89a80f2810cfe97044379c9fd67d1a8d1001d63947830dc5807e61c0a6795171",
    "hpacucli-legacy": "4697b5b12950a7c3e4fba4c4bb089e410d82c3267ad01e319c0cb9a916fecfc6",
    "large": "bc41a55edf1c05cd0601c2cc7370df703f9449e638bd0a516310d1ca6c906beb",
    "no-cache-module": "731bc074ba662285fb6389c6fbe6c8427216c6e8119b837784f2e6b7cb90d31f",
    "recharging": "b7e2f50df75c9d24f6f4c100318e262de42fc66d51a0f63d657eb69e78a63d02",
    "two-controllers": "328f77068846f1066a57c7f7d5c10c411a2862ecd3b766b6ec870afd8fdb06b6",
    "unsafe-nbwc": "22dfcb47c27e643646e8fbb9fb9bb8aaa8afe6134a9f87e8364201bab3cd0e81",
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
    argv = [sys.executable, *flags, "-m", "smartarray_agent.simulator",
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
