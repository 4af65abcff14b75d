"""What the guard of tests/conftest.py reads: what a test added to the checkout, and the
records it appended to an audit file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pathspec import GitIgnoreSpec


def checkout_entries(checkout: Path) -> set[str]:
    """The entries of the checkout and of its tests/ folder, relative to it."""
    return {*os.listdir(checkout), *(f"tests/{name}" for name in os.listdir(checkout / "tests"))}


def left_behind(checkout: Path, before: set[str]) -> list[str]:
    """What appeared in the checkout since ``before`` that git would show. What it ignores
    (.gitignore: a package build's dist/, an install's build/ and *.egg-info, caches) is what
    tools of the host write there, maybe while the tests run, and is not the run's to answer
    for (issue #49 item 4)."""
    new = checkout_entries(checkout) - before
    if not new:  # as after most tests: .gitignore need not be read
        return []
    ignored = GitIgnoreSpec.from_lines((checkout / ".gitignore").read_text().splitlines())
    named = (f"{entry}/" if (checkout / entry).is_dir() else entry for entry in new)  # dist/
    return sorted(entry for entry in named if not ignored.match_file(entry))


def records_by(path: Path, user: str, offset: int) -> list[str]:
    """The records in audit file ``path`` from byte ``offset`` on whose ``user`` is ``user``
    (a record another process writes meanwhile is not the test's)."""
    try:
        with path.open("rb") as file:
            file.seek(offset)
            lines = file.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and str(record.get("user", "")).startswith(f"{user} "):
            found.append(line.decode(errors="replace"))
    return found
