"""Session set-up: hypothesis keeps its example database and caches in a temporary folder of
the run, removed at its end, never in a ``.hypothesis/`` of the checkout."""

from __future__ import annotations

import shutil
import tempfile

import pytest
from hypothesis import configuration

_HOME_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="smartarray-hypothesis-")
    config.stash[_HOME_KEY] = home
    configuration.set_hypothesis_home_dir(home)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
