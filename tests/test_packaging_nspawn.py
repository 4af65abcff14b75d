"""packaging/nspawn/test.sh under pytest: build the .deb, install it into a Debian 12 root,
boot it with systemd-nspawn and check notify readiness, /metrics, reload, restart on SIGKILL,
the watchdog on a hung collection, the textfile service and the maintainer scripts on a
running system (see the script's header).

Needs root, debootstrap and systemd-nspawn (skipped without them). The Debian root is made in
a temporary directory and removed after, unless $SMARTARRAY_CI_CACHE names a directory to keep
it in between runs (.ci/run sets it). Marked ``nspawn``: left out of the default run; ``pytest
-m ''`` runs it."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


def test_the_deb_under_a_real_systemd():
    output = run_nspawn_script("test.sh", timeout_s=1200)
    for check in ("1 ok: active (Type=notify)", "2 ok: /metrics answers", "3 ok: reload",
                  "4 ok: SIGKILL", "5 ok: the watchdog", "6 ok: without node_exporter",
                  "6 ok: smartarray-agent-textfile", "6 ok: with no vendor CLI",
                  "7 ok: dpkg -r stops it", "8 ok: a cache ratio set from the CLI", "PASS in"):
        assert check in output, check
