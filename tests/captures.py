"""Where the shared real captures live. They are third-party data: read in place, never
copied into the project. CI always has them; a checkout without ../shared skips."""

from __future__ import annotations

from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parents[1].parent / "shared" / "captures"
REAL = CAPTURES / "real"
EXPECTED = CAPTURES / "expected"

needs_captures = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"real captures not found at {CAPTURES} (../shared/captures)"
)


def real_files() -> list[Path]:
    return sorted(REAL.glob("*.txt")) if REAL.is_dir() else []


def expected_files() -> list[Path]:
    return sorted(EXPECTED.glob("*.json")) if EXPECTED.is_dir() else []
