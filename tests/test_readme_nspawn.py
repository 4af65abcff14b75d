"""packaging/nspawn/readme.sh under pytest: the README's "On a real server" lines, copied from
README.md, run as a script runs them in a booted Debian 12 root, as root and as a user with sudo:
they must end with exit 0 and the service's metric found, bring no compiler and no mail server,
and a purge must leave /opt and take the publish directory and the group (issue #43).

Needs root, debootstrap and systemd-nspawn (skipped without them), and the network: the lines
fetch Debian packages and the build fetches from PyPI. The Debian root is kept in
$SMARTARRAY_CI_CACHE between runs (as for test_packaging_nspawn.py). Marked ``nspawn``."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


def test_the_readme_real_server_lines_in_a_debian_12_root():
    output = run_nspawn_script("readme.sh", timeout_s=2400)
    for user in ("root", "smartops"):
        for check in (f"1 ok ({user})", f"2 ok ({user})", f"3 ok ({user})"):
            assert check in output, check
    assert "PASS in" in output
