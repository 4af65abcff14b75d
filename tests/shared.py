"""What a whole test run makes once and its tests share: pytest-xdist's recipe for a
session fixture that runs once across its workers (a file lock in the folder they share)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def made_once(tmp_path_factory: pytest.TempPathFactory, worker_id: str, name: str,
              make: Callable[[Path], None]) -> Path:
    """The folder ``name`` of this run, ``make(folder)`` called for it by the first test
    that asks, in whichever worker: the others wait for it and read what it made."""
    if worker_id == "master":  # no xdist workers: this process is the run
        folder = tmp_path_factory.mktemp(name, numbered=False)
        make(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # the workers' basetemps are in it
    folder, done = shared / name, shared / f"{name}.done"
    with FileLock(shared / f"{name}.lock"):
        if not done.exists():
            folder.mkdir()
            make(folder)
            done.touch()
    return folder
