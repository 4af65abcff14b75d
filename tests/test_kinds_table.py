"""The change kinds table (agent/write/kinds.py) against the simulator's own reading of the
modify forms (simulator/modify.py, written from HPE's documentation, not from the agent's
table), and the Ansible cache module, which goes by the kinds table: a kind whose command the
simulator does not plan as the kind means it, or that the module does not set, fails here."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.common.model import Controller
from smartarray_agent.simulator import commands as sim_commands
from smartarray_agent.simulator import modify, resolve_scenario
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.scenario import load_scenario
from smartarray_agent.write.kinds import KINDS, WHAT, Change, Kind, vendor_command

from .agent_cli import Ran
from .sim_cli import sim

COLLECTION = (Path(__file__).resolve().parent.parent / "packaging" / "ansible")


def _sim(tmp_path: Path, *words: str, scenario: str = "gen9-battery") -> Ran:
    """The simulator on ``scenario``'s host in ``tmp_path``, in this process."""
    return sim("--scenario", scenario, "--state-dir", tmp_path, *words)


def _controller(tmp_path: Path, scenario: str = "gen9-battery") -> Controller:
    answer = _sim(tmp_path, "ctrl", "all", "show", "config", "detail", scenario=scenario)
    return parse(answer.stdout).controllers[0]


# Each kind's change, and what the simulator's own plan of its vendor command must set: the
# switches turned on (drive write cache then carries "forced"), the ratio to 25/75.
CHANGES = {
    Kind.CACHE_RATIO: (Change(Kind.CACHE_RATIO, read_percent=25, write_percent=75),
                       {("cache.read_percent", 25), ("cache.write_percent", 75)}),
    Kind.NO_BATTERY_WRITE_CACHE: (Change(Kind.NO_BATTERY_WRITE_CACHE, enable=True),
                                  {("cache.no_battery_write_cache", True)}),
    Kind.DRIVE_WRITE_CACHE: (Change(Kind.DRIVE_WRITE_CACHE, enable=True),
                             {("cache.drive_write_cache", True)}),
    Kind.LOGICAL_DRIVE_CACHING: (Change(Kind.LOGICAL_DRIVE_CACHING, enable=False,
                                        logical_drive="1"), {("caching", False)}),
}


@pytest.mark.parametrize("scenario", ["gen9-battery", "recharging", "hpacucli-legacy", "gen10"])
@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_each_kinds_vendor_command_is_planned_by_the_simulator_as_asked(tmp_path, kind,
                                                                      scenario):
    """The agent's command for each kind, on each CLI generation, parsed and planned by the
    simulator's own reading of HPE's forms (simulator/modify.py's FORMS): it changes what the
    kind says, asks nothing, and an unknown parameter or value would be refused."""
    change, expected = CHANGES[kind]
    host = load_scenario(resolve_scenario(scenario))
    if host.generation == "ssacli-gen10" and kind == Kind.DRIVE_WRITE_CACHE:
        change = dataclasses.replace(change, usage="configured")
        expected = {("cache.drive_write_cache_policy.configured", "Enable")}
    argv = vendor_command(_controller(tmp_path, scenario), change)
    assert argv[:2] == ["ctrl", f"slot={host.controllers[0].slot}"]
    action = sim_commands.parse(argv)
    assert isinstance(action, sim_commands.Modify)
    planned = modify.plan(host.controllers[0], DIALECTS[host.generation], action)
    assert (planned.answer, planned.confirm) == ([], False)
    assert {(made.field, made.value) for made in planned.changes} == expected


def test_the_simulators_help_lists_the_forms_of_its_table(tmp_path):
    shown = _sim(tmp_path, "help").stdout
    for form in modify.FORMS:
        assert f"<target> {form.help()}" in shown


def test_the_ansible_cache_module_sets_every_kind_by_its_table_names(tmp_path):
    pytest.importorskip("ansible")
    sys.path.insert(0, str(COLLECTION))
    try:
        from ansible_collections.smartarray.agent.plugins.modules import cache
    finally:
        sys.path.remove(str(COLLECTION))
    params = {"ratio": "25/75", "no_battery_write_cache": False, "drive_write_cache": False,
              "usage": None, "logical_drive": "1", "caching": False}
    settings = cache.wanted_settings(params)
    whats = {setting.arguments[setting.arguments.index("--what") + 1]: setting
             for setting in settings if "--what" in setting.arguments}
    assert set(whats) == set(WHAT), "the module and write-cache --what disagree"
    ratio = [s for s in settings if s.arguments[0] == "set-cache-ratio"]
    assert len(ratio) == 1
    # What the module reads back in the change's JSON is the kind's audit setting.
    ctrl = _controller(tmp_path)
    ctrl_settings = {kind: set(entry.settings(ctrl))
                     for kind, entry in KINDS.items()}
    assert ratio[0].path[0] in ctrl_settings[Kind.CACHE_RATIO]
    for what, setting in whats.items():
        assert setting.path[0] in ctrl_settings[WHAT[what]], what

