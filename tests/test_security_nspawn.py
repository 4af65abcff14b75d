"""packaging/nspawn/privileges.sh under pytest: the .deb booted under a real systemd with the
root daemon publishing and smartarray-agent-serve.service answering; from inside each unit
(the root textfile run's included) systemd-run is refused and /etc/shadow and the SSH host
keys cannot be read, and what the agent runs in the root units cannot signal PID 1, which
their sandbox alone allows (issue 31 finding 2; see the script's header). Shares test.sh's
cached Debian root. Marked ``nspawn``: ``-m "not nspawn"`` leaves it out."""

from __future__ import annotations

import pytest

from .nspawn import run_nspawn_script

pytestmark = pytest.mark.nspawn


def test_privilege_separation_under_a_real_systemd(tmp_path_factory):
    output = run_nspawn_script("privileges.sh", factory=tmp_path_factory)
    for check in ("1 ok: both units active",
                  "2 ok: serve runs as uid",
                  "3 ok: inside smartarray-agent.service systemd-run is refused",
                  "3 ok: inside smartarray-agent-serve.service systemd-run is refused",
                  "3 ok: inside smartarray-agent-textfile.service systemd-run is refused",
                  "4 ok: inside smartarray-agent.service the agent's child may not signal PID 1",
                  "4 ok: inside smartarray-agent-textfile.service the agent's child may not "
                  "signal PID 1",
                  "5 ok: serve's reload checks the file as its user",
                  "PASS in"):
        assert check in output, check
