"""packaging/nspawn/test.sh under pytest, for Debian 12 (bookworm) and 13 (trixie) in turn:
build the .deb by docs/packaging.md's lines in a fresh root of the release, install it with
apt-get into a second fresh root of it (the dependencies from the release's archive), boot that
root with systemd-nspawn and check notify readiness, /metrics with the simulated controller,
reload (and a reload that fails on a configuration that does not load), restart on SIGKILL,
the watchdog on a hung collection, the textfile service and the maintainer scripts on a
running system (see the script's header).

Needs root, debootstrap and systemd-nspawn (skipped without them), and the network (Debian's
archive, PyPI). The Debian roots are made in a temporary directory and removed after, unless
$SMARTARRAY_CI_CACHE names a directory to keep them in between runs (.ci/run sets it). Marked
``nspawn``: left out of the default run; ``pytest -m ''`` runs it."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


@pytest.mark.parametrize("release", ["bookworm", "trixie"])
def test_the_deb_under_a_real_systemd(release, tmp_path_factory):
    output = run_nspawn_script("test.sh", release, factory=tmp_path_factory, timeout_s=1800)
    for check in ("1 ok: active (Type=notify)", "2 ok: /metrics answers", "3 ok: reload",
                  "3 ok: a reload of a configuration that does not load fails",
                  "4 ok: SIGKILL", "5 ok: the watchdog", "6 ok: without node_exporter",
                  "6 ok: smartarray-agent-textfile", "6 ok: with no vendor CLI",
                  "7 ok: dpkg -r stops it", "8 ok: a cache ratio set from the CLI", "PASS in"):
        assert check in output, check
