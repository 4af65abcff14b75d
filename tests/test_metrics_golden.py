"""The exposition of every bundled simulator scenario, against tests/golden/<scenario>.prom.

The vendor CLI is the simulator, answering in this process as ``--simulate`` has it, read by
the real ssacli collector; only the time and the duration of the collection are pinned.
After an intended change, regenerate and review:

    SMARTARRAY_UPDATE_GOLDEN=1 python -m pytest tests/test_metrics_golden.py
    git diff tests/golden/
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.exporter.render import MetricSettings, render
from smartarray_agent.simulated import SimulatedCli
from smartarray_agent.simulator import list_scenarios, resolve_scenario

from .entries import ssacli_entries
from .promtool import check_metrics, needs_promtool

GOLDEN = Path(__file__).with_name("golden")
UPDATE_VARIABLE = "SMARTARRAY_UPDATE_GOLDEN"
UPDATE = os.environ.get(UPDATE_VARIABLE) == "1"
LAYOUT = Path(__file__).resolve().parent.parent / "docs" / "layout.md"
SCENARIOS = [name for name, _ in list_scenarios()]
COLLECTED_AT = 1_700_000_000.0


def exposition(scenario: str, lock_dir: Path) -> bytes:
    snapshot = read_snapshot(VendorRunner(SimulatedCli(resolve_scenario(scenario)),
                                          HostLock(lock_dir / "cli.lock", 10), timeout_s=60))
    result = CollectorResult("ssacli", True, 1.25, COLLECTED_AT, snapshot)
    text = render(ssacli_entries(result), now=COLLECTED_AT + 1, settings=MetricSettings(180))
    # The build's version and Python are this machine's, not the scenario's.
    return b"".join(line for line in text.splitlines(keepends=True)
                    if b"smartarray_build_info" not in line)


@pytest.fixture(scope="session")
def exposition_of(tmp_path_factory) -> Callable[[str], bytes]:
    """A scenario's exposition, made once per run (per xdist worker) when a test first asks
    for it: a worker given one scenario's tests does not wait for all the others'."""
    made: dict[str, bytes] = {}

    def of(scenario: str) -> bytes:
        if scenario not in made:
            made[scenario] = exposition(scenario, tmp_path_factory.mktemp(scenario))
        return made[scenario]
    return of


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_exposition_matches_the_golden_file(exposition_of, scenario):
    golden = GOLDEN / f"{scenario}.prom"
    if UPDATE:
        golden.write_bytes(exposition_of(scenario))
    assert golden.exists(), f"no {golden.name}: run with SMARTARRAY_UPDATE_GOLDEN=1 to create it"
    assert exposition_of(scenario).decode() == golden.read_text(), (
        f"the exposition of {scenario} changed: if intended, regenerate with "
        "SMARTARRAY_UPDATE_GOLDEN=1 and review the diff"
    )


@needs_promtool
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_promtool_check_metrics(exposition_of, scenario):
    check_metrics(exposition_of(scenario))


def test_every_scenario_has_a_golden_file():
    assert sorted(p.stem for p in GOLDEN.glob("*.prom")) == sorted(SCENARIOS)


def test_the_layout_says_what_adding_a_metric_takes():
    """docs/layout.md's "Adding a metric" names every place a new metric needs, this file's
    update command included, as it is run."""
    adding = LAYOUT.read_text().split("Adding a metric", 1)[1].split("\n\n", 1)[0]
    adding = " ".join(adding.split())
    for place in ("`HELP`", "docs/metrics.md", "tests/golden/",
                  f"{UPDATE_VARIABLE}=1 python -m pytest -n 0 tests/test_metrics_golden.py"):
        assert place in adding, place
