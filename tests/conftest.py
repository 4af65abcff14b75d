"""Session set-up, the paths each test works in, and the rule that a test leaves nothing
behind (issues #15 and #42).

Hypothesis keeps its example database in a temporary folder of the run, removed at its end.
Each test works in paths of its own (:func:`_paths_of_its_own`): a simulated host
(``SMARTARRAY_SIM_STATE_DIR``), a runtime and a state directory (``XDG_RUNTIME_DIR``,
``XDG_STATE_HOME``: a user's host lock, audit file and simulators' default state), and, for
the commands run in this process (tests/agent_cli.py), root's host lock, audit file and
configuration file, all in a temporary folder of the test. A vendor CLI process or an agent
process a test starts as root still has root's fixed paths; the test names its own (a
``--lock-file``, an ``--audit-file``, a configuration), and its records carry a ``user`` of
the test's own (``SUDO_USER``), so that the guard below can tell them from another
process's.

The guard (:func:`_leaves_nothing_behind`) looks only where the test could have written: the
checkout, and the records appended to this host's audit file that carry the test's user. It
never blames a test for what another process on the host did there meanwhile (an
administrator's change, the agent's own records, another checkout's run of the tests, a
package build's ``dist/``: in the checkout it judges only what git would show, issue #49)."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import configuration

from smartarray_agent import config as agent_config
from smartarray_agent.collectors.ssacli import lock
from smartarray_agent.locations import AUDIT_FILE
from smartarray_agent.simulator.state import STATE_DIR_ENV
from smartarray_agent.write import audit

from . import matrix
from .isolation import checkout_entries, left_behind, records_by

CHECKOUT = Path(__file__).resolve().parent.parent
_HOME_KEY = pytest.StashKey[str]()
_TESTS = itertools.count()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full-matrix", action="store_true",
                     help="run every case of the large test matrices (tests/matrix.py; "
                          ".ci/run does), not their sample")


def pytest_configure(config: pytest.Config) -> None:
    matrix.run_every_case(config.getoption("full_matrix"))
    home = tempfile.mkdtemp(prefix="smartarray-hypothesis-")
    config.stash[_HOME_KEY] = home
    configuration.set_hypothesis_home_dir(home)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


_LONG = ("nspawn", "e2e", "packages", "ansible", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that boot a container (marker ``nspawn``, minutes each) first, each followed
    by a short one, handed out one at a time (``--maxschedchunk 1``): a worker holds the
    next test while its container runs, and the containers run beside each other and beside
    the rest, not one after the other once the rest is done. The README's runs wait for each
    other (the agent they start listens on the host's port 9712): the longer first, the other
    last."""
    def order(item: pytest.Item) -> int:
        if item.path.name == "test_readme_nspawn.py":
            return 0 if "trixie" in item.name else 2
        return 1

    booting = sorted((item for item in items if item.get_closest_marker("nspawn")), key=order)
    short = [item for item in items
             if not any(item.get_closest_marker(mark) for mark in _LONG)][:len(booting)]
    rest = [item for item in items if item not in booting and item not in short]
    ordered = []
    for at, test in enumerate(booting):
        ordered += [test, *short[at:at + 1]]
    assert len(ordered) + len(rest) == len(items), "the order lost or doubled a test"
    items[:] = ordered + rest


@pytest.fixture(autouse=True)
def _paths_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    host = tmp_path_factory.mktemp("host")
    (host / "simulated").mkdir()
    monkeypatch.setenv(STATE_DIR_ENV, str(host / "simulated"))
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME"):
        (host / name).mkdir(mode=0o700)
        monkeypatch.setenv(name, str(host / name))
    # The audit records' user: NAME (via sudo as root).
    monkeypatch.setenv("SUDO_USER", f"test-{os.getpid()}-{next(_TESTS)}")
    monkeypatch.setattr(lock, "DEFAULT_SYSTEM_PATH", host / "run" / "cli.lock")
    monkeypatch.setattr(audit, "SYSTEM_AUDIT_FILE", host / "lib" / "audit.jsonl")
    monkeypatch.setattr(agent_config, "DEFAULT_PATH", host / "etc" / "config.toml")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@pytest.fixture(autouse=True)
def _leaves_nothing_behind(_paths_of_its_own: None) -> Iterator[None]:
    checkout = checkout_entries(CHECKOUT)
    host_audit = Path(AUDIT_FILE)  # what a command the test runs as root appends to
    offset = _size(host_audit)
    user = os.environ["SUDO_USER"]
    yield
    left = left_behind(CHECKOUT, checkout)
    assert not left, f"the test left files outside its temporary folders: {left}"
    written = records_by(host_audit, user, offset)
    assert not written, f"the test wrote records to this host's {host_audit}: {written}"
