"""Run a packaging/nspawn script under pytest: skipped without root, systemd-nspawn,
debootstrap, nsenter or dpkg-deb; fails with the script's output. The Debian roots are kept in
$SMARTARRAY_CI_CACHE between runs (.ci/run sets it), else made in a temporary directory and
removed after. The .deb a script builds for a release (in a fresh root of it, packaging/nspawn/
lib.sh) is built once per test run: the scripts of one run share it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .run_once import run_directory

SCRIPTS = Path(__file__).resolve().parent.parent / "packaging" / "nspawn"


def run_nspawn_script(name: str, *args: str, factory: pytest.TempPathFactory,
                      timeout_s: float = 900) -> str:
    """The standard output of ``packaging/nspawn/NAME ARGS``, which must exit 0."""
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter", "dpkg-deb")
               if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'nothing else'}"
                    " (apt-get install systemd-container debootstrap)")
    debs = run_directory(factory) / "nspawn-debs"
    with tempfile.TemporaryDirectory(prefix="smartarray-nspawn-cache.") as scratch:
        cache = os.environ.get("SMARTARRAY_CI_CACHE") or scratch
        result = subprocess.run(["bash", str(SCRIPTS / name), *args], capture_output=True,
                                text=True, timeout=timeout_s,
                                env={**os.environ, "SMARTARRAY_CI_CACHE": cache,
                                     "SMARTARRAY_NSPAWN_DEBS": str(debs)})
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout
