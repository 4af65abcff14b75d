"""The test run leaves nothing in the checkout (issue #15): hypothesis's example database and
caches go to the run's own temporary folder."""

from __future__ import annotations

from pathlib import Path

from hypothesis import configuration

CHECKOUT = Path(__file__).resolve().parent.parent


def test_hypothesis_stores_nothing_in_the_checkout() -> None:
    directory = configuration.storage_directory(intent_to_write=False)
    home = Path(getattr(directory, "path", directory)).resolve()  # older releases return a Path
    assert not home.is_relative_to(CHECKOUT), home
    assert home.name.startswith("smartarray-hypothesis-")
