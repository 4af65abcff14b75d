"""What the guard of tests/conftest.py reads: the records a test appended to an audit file."""

from __future__ import annotations

import json
from pathlib import Path


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
