"""packaging/nspawn/privileges.sh under pytest: the .deb booted under a real systemd with the
root daemon publishing and smartarray-agent-serve.service answering; from inside each unit
(the root textfile run's included) systemd-run is refused and /etc/shadow and the SSH host
keys cannot be read (see the script's header). Shares test.sh's cached Debian root. Marked
``nspawn``: ``-m "not nspawn"`` leaves it out."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


def test_privilege_separation_under_a_real_systemd():
    output = run_nspawn_script("privileges.sh")
    for check in ("1 ok: both units active",
                  "2 ok: serve runs as uid",
                  "3 ok: inside smartarray-agent.service systemd-run is refused",
                  "3 ok: inside smartarray-agent-serve.service systemd-run is refused",
                  "3 ok: inside smartarray-agent-textfile.service systemd-run is refused",
                  "PASS in"):
        assert check in output, check
