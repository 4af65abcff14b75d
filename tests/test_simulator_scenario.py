"""Scenario files, the bundled scenarios, command-line parsing and the public functions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from smartarray_agent.simulator import (
    BUNDLED,
    ScenarioError,
    list_scenarios,
    resolve_scenario,
    vendor_argv,
)
from smartarray_agent.simulator.commands import (
    CommandError,
    Modify,
    SetTarget,
    Show,
    Target,
    parse,
)
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.scenario import Scenario, load_scenario

REQUIRED = {
    "gen8-capacitor", "gen9-battery", "gen10", "failed-battery", "recharging",
    "no-cache-module", "hba-mode", "unsafe-nbwc", "two-controllers", "large",
}  # fmt: skip
MINIMAL = """
description = "x"
generation = "ssacli3"
[[controllers]]
slot = "0"
model = "Smart Array P440ar"
serial = "S"
firmware = "1"
"""


def parse_scenario(tmp_path: Path, text: str) -> Scenario:
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return load_scenario(path)


def test_bundled_scenarios_load_and_cover_the_issue() -> None:
    listed = dict(list_scenarios())
    assert set(listed) >= REQUIRED
    generations = set()
    for name, description in listed.items():
        assert description and "\n" not in description, name
        scenario = load_scenario(resolve_scenario(name))
        generations.add(scenario.generation)
    assert generations == set(DIALECTS)


def test_the_large_scenario_is_eight_controllers_of_24_drives() -> None:
    scenario = load_scenario(resolve_scenario("large"))
    assert [len(c.physical_drives) for c in scenario.controllers] == [24] * 8


def test_unknown_keys_are_rejected_with_their_file_line_and_path(tmp_path) -> None:
    text = MINIMAL + '[controllers.cache]\ncolour = "blue"\n'
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(tmp_path, text)
    # the line of its controller's [[controllers]]: a table in a list is known by its header
    assert str(caught.value) == (f"{tmp_path}/scenario.toml:4: controllers.0.cache.colour: "
                                 "unknown key")
    with pytest.raises(ScenarioError, match=r"toml:10: faults\.hnag: unknown key \(did you "
                       r"mean hang\?\)"):
        parse_scenario(tmp_path, MINIMAL + "[faults]\nhnag = []\n")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[controllers.cache]\nread_percent = 30\nwrite_percent = 80\n", "must be 100"),
        ("[controllers.cache]\nsize_bytes = '2 GB'\n", "is not bytes or a number"),
        ("[[controllers.physical_drives]]\nid = '1I-1-1'\n", "is not port:box:bay"),
        ("[[controllers.logical_drives]]\nid = '1'\narray = 'B'\n", "names array 'B'"),
        ("[[faults.battery_timeline]]\nslot = '9'\nafter_s = 1\n", "not a controller"),
    ],
)
def test_inconsistent_scenarios_are_rejected(tmp_path, extra: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(tmp_path, MINIMAL + extra)


def test_generation_rules(tmp_path) -> None:
    with pytest.raises(ScenarioError, match="hpacucli9 has no hba mode"):
        parse_scenario(tmp_path, MINIMAL.replace("ssacli3", "hpacucli9") + 'mode = "hba"\n')
    gen10 = parse_scenario(tmp_path, MINIMAL.replace("ssacli3", "ssacli-gen10"))
    cache = gen10.controllers[0].cache
    assert cache.drive_write_cache is None
    assert cache.drive_write_cache_policy is not None
    assert cache.drive_write_cache_policy.configured == "Default"


def test_sizes_take_binary_units(tmp_path) -> None:
    scenario = parse_scenario(tmp_path, MINIMAL + '[controllers.cache]\nsize_bytes = "512 MiB"\n'
                              "memory_available_bytes = 1024\n")
    assert scenario.controllers[0].cache.size_bytes == 512 * 2**20
    assert scenario.controllers[0].cache.memory_available_bytes == 1024


def test_resolve_scenario_takes_names_and_paths_and_names_the_bundled_ones(tmp_path) -> None:
    assert resolve_scenario("gen10") == BUNDLED / "gen10.toml"
    path = tmp_path / "mine.toml"
    path.write_text(MINIMAL)
    assert resolve_scenario(str(path)) == path
    with pytest.raises(ScenarioError, match=r"unknown scenario 'gen11'.*gen9-battery"):
        resolve_scenario("gen11")


def test_vendor_argv_is_a_command_prefix(tmp_path) -> None:
    argv = vendor_argv("gen10", state_dir=tmp_path)
    assert argv[:3] == [sys.executable, "-m", "smartarray_agent.simulator"]
    assert argv[3:] == ["--scenario", str(BUNDLED / "gen10.toml"), "--state-dir", str(tmp_path)]
    assert "--state-dir" not in vendor_argv("gen10")


def test_ratio_sets_per_generation() -> None:
    assert [f"{r}/{w}" for r, w in DIALECTS["hpacucli9"].ratios()] == [
        "0/100", "25/75", "50/50", "75/25", "100/0",
    ]  # fmt: skip
    for generation in ("hpssacli2", "ssacli3", "ssacli-gen10"):
        ratios = DIALECTS[generation].ratios()
        assert len(ratios) == 21 and (10, 90) in ratios and (25, 75) in ratios


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("ctrl all show config detail", Show(Target(None), "config detail")),
        ("controller slot=0 show", Show(Target("0"), "detail")),
        ("CTRL ALL SHOW", Show(Target(None), "list")),
        ('ctrl slot="1" logicaldrive all modify caching=enable',
         Modify(Target("1", ld="all"), {"caching": "enable"}, False, "")),
        ("ctrl slot=0 modify dwc=enable forced",
         Modify(Target("0"), {"drivewritecache": "enable"}, True, "")),
        ("set target controller slot=0", SetTarget(Target("0"))),
    ],
)  # fmt: skip
def test_command_lines_parse(line: str, action) -> None:
    parsed = parse(line.replace('"', "").split())
    assert parsed.__class__ is action.__class__
    for name in ("target", "what", "params", "forced"):
        if hasattr(action, name):
            assert getattr(parsed, name) == getattr(action, name)


def test_commands_after_set_target_use_it() -> None:
    action = parse(["modify", "cacheratio=50/50"], default=Target("0"))
    assert isinstance(action, Modify) and action.target == Target("0")
    drives = parse(["ld", "all", "modify", "caching=enable"], default=Target("3"))
    assert drives.target == Target("3", ld="all")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("ctrl slot=0 show config details", 'Error: Syntax error at "details"'),
        ("ctrl slot=0 show config", 'Error: Syntax error at "config"'),
        ("ctrl slot=0 ld all show", 'Error: Syntax error at "show"'),  # the agent sends none
        ("ctrl slot=0 pd 1I:1:1 show detail", 'Error: Syntax error at "show"'),
        ("ctrl slot=2 delete force", 'Error: Syntax error at "delete"'),
        ("controller logicaldrive all show", "Error: The controller must be identified by slot"),
        ("show", "Error: The controller must be identified by slot"),
        ("ctrl slot=ATTR_VALUE show", 'Error: Invalid target syntax. "attr_value" is not a'),
        ("frobnicate", 'Error: Syntax error at "frobnicate"'),
    ],
)
def test_bad_command_lines_raise_the_vendor_error(line: str, error: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse(line.split())
    assert caught.value.lines[0].startswith(error)
