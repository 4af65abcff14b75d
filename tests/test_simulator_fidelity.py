"""Every command the simulator answers prints lines of the shapes the real CLI prints.

For each command, a small grammar (one pattern per kind of line) is first checked against
the real captures of that command in ../shared/captures/real: every line of them must fit,
so the grammar is the real CLI's. Then every line the simulator prints for that command, for
every bundled scenario, must fit the same grammar. ``ld|pd all show status`` has no capture
in the corpus; its grammar is checked against the lines other tools parse (documented below).
The detail blocks (``show detail``, ``show config detail``, ``ld N show``, ``pd ID show``),
the banner, ``version`` and the drive write cache warning are compared label by label in
test_simulator_conformance.py.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from smartarray_agent.collectors.ssacli.cleanup import clean
from smartarray_agent.simulator import list_scenarios, resolve_scenario
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.scenario import Faults, load_scenario
from smartarray_agent.simulator.session import Session
from smartarray_agent.simulator.state import StateStore

from .captures import REAL, needs_captures

_SIZE = r"[\d.]+ [KMGT]B"
_RAID = r"RAID [\d+]+(?: \(ADG\))?"
_WHERE = r"port \w+:box \w+:bay \w+"
LINES = {
    "header": r"\S.* in (?:Slot \S+|MY STORAGE)(?: \([^()]+\))*",
    "listed": r"\S.* in Slot \S+(?: \([^()]+\))* +\(sn: [^()]+\)",
    "status": r"   (?:Controller|Cache|Battery/Capacitor) Status: \S.*",
    "array": r"   [Aa]rray \S+(?: \([^()]*\))?",
    "group": r"   (?:HBA Drives|[Uu]nassigned)",
    "device": r"   (?:Enclosure SEP|Expander|SEP|Port Name:|\S+ SAS Exp Card) .*",
    "ld": rf"      logicaldrive \d+ \({_SIZE}, {_RAID}, [^()]+\)",
    "pd": rf"      physicaldrive \S+ \({_WHERE}, [^,()]+, {_SIZE}, [^()]+\)",
    "ld status": rf"   logicaldrive \d+ \({_SIZE}, {_RAID}\): \S.*",
    "pd status": rf"   physicaldrive \S+ \({_WHERE}, {_SIZE}\): \S.*",
}
_NOTICE = re.compile(r"^(?:Warning|Note|[A-Z]+(?: [A-Z]+)+):")

# command words ({slot}: a controller's slot) -> the kinds of line it prints, real captures.
# Not used: hpacucli-ctrl-slot-show-config-P410i-1 lost its indentation to its author (INDEX.tsv).
COMMANDS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "ctrl all show": (["ctrl", "all", "show"], ["listed"], [
        "hpacucli-ctrl-all-show-P420-1.txt", "hpssacli-ctrl-all-show-P420i-1.txt",
        "hpssacli-ctrl-all-show-P420i-2.txt", "hpacucli-interactive-ctrl-all-show-P410i-1.txt",
    ]),
    "ctrl all show status": (["ctrl", "all", "show", "status"], ["header", "status"], [
        "hpacucli-controller-all-show-status-5i-642-1.txt",
        "hpacucli-controller-all-show-status-6i-1.txt",
        "hpacucli-controller-all-show-status-MSA1500-P400i-1.txt",
        "hpacucli-controller-all-show-status-P400-1.txt",
        "hpacucli-controller-all-show-status-P410i-P411-1.txt",
        "hpacucli-ctrl-all-show-status-P400-P800-1.txt",
        "hpacucli-ctrl-all-show-status-P410i-P800-1.txt",
        "hpacucli-ctrl-all-show-status-P420i-1.txt",
        "hpacucli-interactive-ctrl-all-show-status-P400-1.txt",
        "hpssacli-controller-all-show-status-B140i-1.txt",
        "hpssacli-controller-all-show-status-H240ar-1.txt",
        "hpssacli-controller-all-show-status-P840-H244br-1.txt",
    ]),
    "ctrl all show config": (
        ["ctrl", "all", "show", "config"], ["listed", "array", "group", "device", "ld", "pd"], [
            "hpacucli-ctrl-all-show-config-P400i-1.txt",
            "hpacucli-ctrl-all-show-config-P410i-2.txt",
            "hpacucli-ctrl-all-show-config-P420i-1.txt",
            "hpssacli-ctrl-slot-show-config-P440ar-1.txt",
            "ssacli-ctrl-all-show-config-P400-1.txt",
        ]),
    "ld all show": (["ctrl", "slot={slot}", "ld", "all", "show"], ["header", "array", "ld"], [
        "hpacucli-controller-slot-ld-all-show-5i-1.txt",
        "hpacucli-controller-slot-ld-all-show-E200i-1.txt",
        "hpacucli-controller-slot-ld-all-show-failed-array-P410-1.txt",
        "hpacucli-ctrl-slot-ld-all-show-P410i-1.txt",
        "ssacli-controller-slot-ld-all-show-P816i-a-1.txt",
    ]),
    "pd all show": (
        ["ctrl", "slot={slot}", "pd", "all", "show"], ["header", "array", "group", "pd"], [
            "hpssacli-controller-slot-pd-all-show-P840-1.txt",
            "ssacli-interactive-set-target-pd-all-show-P410i-1.txt",
        ]),
    "ld all show status": (["ctrl", "slot={slot}", "ld", "all", "show", "status"],
                           ["ld status"], []),
    "pd all show status": (["ctrl", "slot={slot}", "pd", "all", "show", "status"],
                           ["pd status"], []),
}

# No capture of these two in the corpus: the lines as tools that parse them quote them
# (check_smartarray-style plugins, node exporters' ssacli collectors).
DOCUMENTED = {
    "ld all show status": [
        "   logicaldrive 1 (279.4 GB, RAID 1): OK",
        "   logicaldrive 2 (558.9 GB, RAID 5): Recovering, 45% complete",
        "   logicaldrive 1 (931.48 GB, RAID 1): OK",
    ],
    "pd all show status": [
        "   physicaldrive 1I:1:1 (port 1I:box 1:bay 1, 300 GB): OK",
        "   physicaldrive 2I:0:1 (port 2I:box 0:bay 1, 1 TB): OK",
        "   physicaldrive 1I:1:2 (port 1I:box 1:bay 2, 146 GB): Failed",
    ],
}


def kind_of(line: str, kinds: list[str]) -> str | None:
    return next((k for k in kinds if re.fullmatch(LINES[k], line)), None)


def misfits(lines: list[str], kinds: list[str]) -> list[str]:
    """The lines that fit none of ``kinds``; blank lines and notice paragraphs
    (``Warning: ...`` to the next blank line) are not the command's own lines."""
    found, in_notice = [], False
    for line in lines:
        if not line.strip():
            in_notice = False
            continue
        in_notice = in_notice or bool(_NOTICE.match(line))
        if not in_notice and kind_of(line, kinds) is None:
            found.append(line)
    return found


@needs_captures
@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_grammar_fits_every_line_of_the_real_captures(command: str) -> None:
    _, kinds, names = COMMANDS[command]
    present = [REAL / name for name in names if (REAL / name).exists()]
    if not names:
        lines = DOCUMENTED[command]
    elif present:
        lines = [line for path in present for line in _capture_lines(path)]
    else:
        pytest.skip(f"no capture of {command!r} present")
    assert any(line.strip() for line in lines)
    assert misfits(lines, kinds) == []


def _capture_lines(path: Path) -> list[str]:
    return clean(path.read_text(encoding="utf-8", errors="replace")).lines


def _simulated(tmp_path: Path, scenario_name: str, words: list[str]) -> list[str] | None:
    """What the simulator prints for ``words`` in ``scenario_name``, or None when it answers
    with an Error (a controller without logical drives, say)."""
    path = resolve_scenario(scenario_name)
    scenario = load_scenario(path)
    slot = scenario.controllers[0].slot
    out = io.BytesIO()
    session = Session(StateStore(tmp_path / scenario_name, path), DIALECTS[scenario.generation],
                      Faults(), out, io.StringIO(), "fidelity")
    code = session.execute([word.format(slot=slot) for word in words])
    text = out.getvalue().decode()
    return None if code else text.splitlines()


@pytest.mark.parametrize("scenario", [name for name, _ in list_scenarios()])
def test_every_command_prints_lines_of_the_real_shapes(tmp_path, scenario: str) -> None:
    printed = 0
    for command, (words, kinds, _) in COMMANDS.items():
        lines = _simulated(tmp_path, scenario, words)
        if lines is None:
            continue
        assert misfits(lines, kinds) == [], command
        printed += sum(1 for line in lines if line.strip())
    assert printed > 0


def test_drive_status_puts_the_status_after_the_parentheses(tmp_path) -> None:
    lds = _simulated(tmp_path, "gen9-battery", COMMANDS["ld all show status"][0])
    pds = _simulated(tmp_path, "gen9-battery", COMMANDS["pd all show status"][0])
    assert lds is not None and pds is not None
    assert "   logicaldrive 1 (279.4 GB, RAID 1): OK" in lds
    assert "   physicaldrive 1I:1:1 (port 1I:box 1:bay 1, 300 GB): OK" in pds
