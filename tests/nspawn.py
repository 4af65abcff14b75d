"""Run a packaging/nspawn script under pytest: skipped without root, systemd-nspawn,
debootstrap, nsenter or dpkg-deb; fails with the script's output."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "packaging" / "nspawn"


def run_nspawn_script(name: str) -> str:
    """The standard output of ``packaging/nspawn/NAME``, which must exit 0."""
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter", "dpkg-deb")
               if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'nothing else'}"
                    " (apt-get install systemd-container debootstrap)")
    result = subprocess.run(["bash", str(SCRIPTS / name)], capture_output=True, text=True,
                            timeout=900)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout
