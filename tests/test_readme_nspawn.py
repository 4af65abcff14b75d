"""packaging/nspawn/readme.sh under pytest: the README's "On a real server" lines, copied from
README.md, run as a script runs them in a booted Debian 12 root, as root and as a user with sudo:
they must end with exit 0 and the service's metric found, bring no compiler and no mail server,
and a purge must leave /opt and take the publish directory and the group (issue #43).

Needs root, debootstrap and systemd-nspawn (skipped without them), and the network: the lines
fetch Debian packages and the build fetches from PyPI. The Debian root is kept in
$SMARTARRAY_CI_CACHE between runs (as for test_packaging_nspawn.py). Marked ``nspawn``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "packaging" / "nspawn" / "readme.sh"

pytestmark = pytest.mark.nspawn


def test_the_readme_real_server_lines_in_a_debian_12_root():
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter")
               if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'nothing else'}"
                    " (apt-get install systemd-container debootstrap)")
    with tempfile.TemporaryDirectory(prefix="smartarray-nspawn-cache.") as scratch:
        cache = os.environ.get("SMARTARRAY_CI_CACHE") or scratch
        result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True,
                                timeout=2400, env={**os.environ, "SMARTARRAY_CI_CACHE": cache})
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    for user in ("root", "smartops"):
        for check in (f"1 ok ({user})", f"2 ok ({user})", f"3 ok ({user})"):
            assert check in result.stdout, check
    assert "PASS in" in result.stdout
