"""What a test run builds once for all its pytest-xdist workers: the packages that
tests/test_packaging_build.py and test_packaging_reproducible.py read, (through the nspawn
scripts, packaging/nspawn/lib.sh) the .deb of each Debian release, and the mixin rendered with
changed settings (tests/test_mixin.py). The first worker to ask
builds, under a lock; the others wait for it and read what it made."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest


def run_directory(factory: pytest.TempPathFactory) -> Path:
    """The test run's base temporary directory, which holds each xdist worker's own."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(OUT)``'s package, made once in this test run into a directory of its own."""
    out = run_directory(factory) / "builds" / name
    out.mkdir(parents=True, exist_ok=True)
    with (out / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = out / ".made"
        if not made.exists():
            made.write_text(str(build(out)))
        return Path(made.read_text())
