"""The change kinds table (agent/write/kinds.py) against the simulator's own table of the
modify forms it accepts (simulator/modify.py, written from HPE's documentation, not from the
agent's table), and the Ansible cache module, which goes by the kinds table: a kind whose form
the simulator does not document, or that the module does not set, fails here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.common.model import Controller
from smartarray_agent.simulator.modify import FORMS
from smartarray_agent.write.kinds import KINDS, WHAT, Change, Kind, vendor_command

from .agent_cli import Ran
from .sim_cli import sim

COLLECTION = (Path(__file__).resolve().parent.parent / "packaging" / "ansible")


def _sim(tmp_path: Path, *words: str) -> Ran:
    """The simulator on gen9-battery's host in ``tmp_path``, in this process."""
    return sim("--scenario", "gen9-battery", "--state-dir", tmp_path, *words)


def _controller(tmp_path: Path) -> Controller:
    return parse(_sim(tmp_path, "ctrl", "all", "show", "config", "detail").stdout).controllers[0]


def _form(text: str) -> tuple[str, str, set[str], set[str]]:
    """``ld N modify arrayaccelerator=enable|disable [forced]`` as its target, parameter,
    values and optional words."""
    before, _, after = text.partition("modify ")
    first, *rest = after.split()
    param, _, values = first.partition("=")
    return before.strip(), param, set(values.split("|")), {word.strip("[]") for word in rest}


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_each_kinds_form_is_one_the_simulator_documents(kind):
    target, param, values, options = _form(KINDS[kind].form)
    documented = {(form.target, form.param): form for form in FORMS}
    assert (target, param) in documented, "the simulator does not document this form"
    form = documented[target, param]
    assert values <= set(form.values) and options <= set(form.options)


def test_the_simulators_help_lists_the_forms_of_its_table(tmp_path):
    shown = _sim(tmp_path, "help").stdout
    for form in FORMS:
        assert f"<target> {form.help()}" in shown


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_each_kinds_vendor_command_fits_its_form_and_the_simulator_takes_it(tmp_path, kind):
    ctrl = _controller(tmp_path)
    change = {
        Kind.CACHE_RATIO: Change(kind, read_percent=25, write_percent=75),
        Kind.LOGICAL_DRIVE_CACHING: Change(kind, enable=False, logical_drive="1"),
    }.get(kind, Change(kind, enable=False))
    argv = vendor_command(ctrl, change)
    assert argv[:2] == ["ctrl", f"slot={ctrl.slot}"]
    form_words = {word.strip("[]").split("=")[0] for word in KINDS[kind].form.split()}
    for word in argv[2:]:
        assert word.split("=")[0] in form_words or (word == "1" and "N" in form_words), word
    answer = _sim(tmp_path, *argv)
    assert answer.returncode == 0 and "Error" not in answer.stdout, answer.stdout


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

