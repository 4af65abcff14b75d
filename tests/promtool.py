"""``promtool check metrics`` on an exposition, when promtool is installed (CI installs it)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (apt-get install prometheus)"
)


def check_metrics(exposition: bytes) -> None:
    """Fail with promtool's complaints unless the exposition passes its lint."""
    assert PROMTOOL is not None
    result = subprocess.run(
        [PROMTOOL, "check", "metrics"], input=exposition, capture_output=True, timeout=60
    )
    assert result.returncode == 0, (result.stdout + result.stderr).decode()
