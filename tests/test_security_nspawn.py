"""packaging/nspawn/privileges.sh under pytest: the .deb booted under a real systemd with the
root daemon publishing and smartarray-agent-serve.service answering; from inside each unit
systemd-run is refused and /etc/shadow and the SSH host keys cannot be read (see the script's
header). Needs root, debootstrap and systemd-nspawn (skipped without them); shares test.sh's
cached Debian root. Marked ``nspawn``: ``-m "not nspawn"`` leaves it out."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "packaging" / "nspawn" / "privileges.sh"

pytestmark = pytest.mark.nspawn


def test_privilege_separation_under_a_real_systemd():
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter", "dpkg-deb")
               if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'nothing else'}"
                    " (apt-get install systemd-container debootstrap)")
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=900)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    for check in ("1 ok: both units active",
                  "2 ok: serve runs as uid",
                  "3 ok: inside smartarray-agent.service systemd-run is refused",
                  "3 ok: inside smartarray-agent-serve.service systemd-run is refused",
                  "PASS in"):
        assert check in result.stdout, check
