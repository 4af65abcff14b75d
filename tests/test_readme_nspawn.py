"""packaging/nspawn/readme.sh under pytest: the README's first command and its "On a real
server" lines, copied from README.md, run as a script runs them in a fresh booted root of
Debian 12 as root and of Debian 13 as a user with sudo: the first serves the simulated
controller; the lines end with exit 0 and the service's metric found, bring no compiler and no
mail server, and a purge leaves /opt and takes the publish directory and the group (issues #43,
#48). On Debian 13 the README's second command, the tests, runs too, on its Python 3.13
(issue #48 item 3), in the same root, after the first.

Needs root, debootstrap and systemd-nspawn (skipped without them), and the network: the lines
fetch Debian packages and the build fetches from PyPI. The Debian roots are kept in
$SMARTARRAY_CI_CACHE between runs (as for test_packaging_nspawn.py). Marked ``nspawn``."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


@pytest.mark.parametrize(("release", "user", "part"),
                         [("bookworm", "root", "server"), ("trixie", "smartops", "all")])
def test_the_readme_lines_in_a_fresh_root(release, user, part, tmp_path_factory):
    output = run_nspawn_script("readme.sh", release, user, part, factory=tmp_path_factory,
                               timeout_s=2400)
    checks = [f"1 ok ({user}): the first command serves smartarray_controller_info{{",
              f"2 ok ({user}): the lines ran", f"2 ok ({user}): no compiler",
              f"3 ok ({user})", "PASS in"]
    if part == "all":
        checks.append(f"1 ok ({user}): the tests on Python 3.13")
    for check in checks:
        assert check in output, check
