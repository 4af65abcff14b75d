"""Every one-line-per-controller command the simulator answers prints lines of the shapes
the real CLI prints.

For each command, a small grammar (one pattern per kind of line) is first checked against
the real captures of that command in ../shared/captures/real: every line of them must fit,
so the grammar is the real CLI's. Then every line the simulator prints for that command, for
every bundled scenario, must fit the same grammar. The detail blocks (``show detail``,
``show config detail``), the banner, ``version`` and the drive write cache warning are
compared label by label in test_simulator_conformance.py.
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

LINES = {
    "header": r"\S.* in (?:Slot \S+|MY STORAGE)(?: \([^()]+\))*",
    "listed": r"\S.* in Slot \S+(?: \([^()]+\))* +\(sn: [^()]+\)",
    "status": r"   (?:Controller|Cache|Battery/Capacitor) Status: \S.*",
}
_NOTICE = re.compile(r"^(?:Warning|Note|[A-Z]+(?: [A-Z]+)+):")

# command words ({slot}: a controller's slot) -> the kinds of line it prints, real captures.
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
    if present:
        lines = [line for path in present for line in _capture_lines(path)]
    else:
        pytest.skip(f"no capture of {command!r} present")
    assert any(line.strip() for line in lines)
    assert misfits(lines, kinds) == []


def _capture_lines(path: Path) -> list[str]:
    return clean(path.read_text(encoding="utf-8", errors="replace")).lines


def _simulated(tmp_path: Path, scenario_name: str, words: list[str]) -> list[str] | None:
    """What the simulator prints for ``words`` in ``scenario_name``, or None when it answers
    with an Error (a scenario without controllers, say)."""
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
