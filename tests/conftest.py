"""Session set-up and the rule that a test leaves nothing behind (issue #15): hypothesis keeps
its example database in a temporary folder of the run, removed at its end; each test simulates
a host of its own (``SMARTARRAY_SIM_STATE_DIR`` in a temporary folder, where a test does not
name one), and every test is checked for files it left in the checkout or in the places the
agent uses on a real host (the host lock's directory, the audit file's, the simulator's
default state), and for records it appended to this host's real audit file."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import configuration

from smartarray_agent.collectors.ssacli.lock import default_lock_path
from smartarray_agent.simulator.state import STATE_DIR_ENV
from smartarray_agent.write.audit import default_audit_file

CHECKOUT = Path(__file__).resolve().parent.parent
_HOME_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="smartarray-hypothesis-")
    config.stash[_HOME_KEY] = home
    configuration.set_hypothesis_home_dir(home)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


def _host_places() -> list[Path]:
    """Where the agent keeps things on a real host, for the user running the tests."""
    places = [default_lock_path().parent, default_audit_file().parent,
              Path(f"/tmp/smartarray-sim-{os.getuid()}")]
    if os.environ.get("XDG_RUNTIME_DIR"):
        places.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "smartarray-sim")
    return places


def _files(place: Path) -> set[str]:
    """Every entry under ``place`` (nothing when it is missing). Only new entries count: on a
    host where the agent runs, it touches its own lock and audit files between the tests."""
    found: set[str] = set()
    for root, directories, names in os.walk(place):
        found.update(os.path.join(root, name) for name in [*directories, *names])
    return found


def _checkout_entries() -> set[str]:
    return {entry.name for entry in os.scandir(CHECKOUT)} | {
        f"tests/{entry.name}" for entry in os.scandir(CHECKOUT / "tests")}


@pytest.fixture(autouse=True)
def _a_simulated_host_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path_factory.mktemp("simulated-host")))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@pytest.fixture(autouse=True)
def _leaves_nothing_behind() -> Iterator[None]:
    places = _host_places()
    before = {place: _files(place) for place in places}
    checkout = _checkout_entries()
    audit = default_audit_file()
    audit_size = _size(audit)  # only write commands append to it, never the agent
    yield
    left = sorted(_checkout_entries() - checkout - {"tests/__pycache__"})
    for place in places:
        left += sorted(_files(place) - before[place])
    assert not left, f"the test left files outside its temporary folders: {left}"
    assert _size(audit) == audit_size, f"the test wrote records to this host's {audit}"
