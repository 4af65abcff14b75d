"""Each test works in paths of its own, and the guard of tests/conftest.py blames a test only
for what it wrote itself, never for another process's traffic on the host (issue #42)."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import pytest

from smartarray_agent import config
from smartarray_agent.collectors.ssacli.lock import default_lock_path
from smartarray_agent.locations import AUDIT_FILE, CONFIG_FILE
from smartarray_agent.simulator.state import default_state_dir
from smartarray_agent.write.audit import default_audit_file

from .agent_cli import agent
from .isolation import checkout_entries, left_behind, records_by

CHECKOUT = Path(__file__).resolve().parent.parent


def record(user: str, outcome: str) -> str:
    return json.dumps({"user": user, "event": "outcome", "outcome": outcome}) + "\n"


def test_the_guard_reads_only_the_records_of_the_test_appended_since_it_began(tmp_path):
    log = tmp_path / "audit.jsonl"
    mine = os.environ["SUDO_USER"]
    log.write_text(record(f"{mine} (via sudo as root)", "earlier"))
    offset = log.stat().st_size
    with log.open("a") as file:  # an administrator's change, the daemon's, another test's
        file.write(record("alice (via sudo as root)", "changed"))
        file.write(record("smartarray-agent (daemon)", "reconciled"))
        file.write(record(f"{mine}0 (via sudo as root)", "changed"))
        file.write('{"user": "torn')
    assert records_by(log, mine, offset) == []
    with log.open("a") as file:
        file.write("\n" + record(f"{mine} (via sudo as root)", "changed"))
    assert [json.loads(line)["outcome"] for line in records_by(log, mine, offset)] == ["changed"]
    assert records_by(tmp_path / "missing", mine, 0) == []


def test_the_guard_blames_a_test_for_what_it_left_not_for_a_package_build_beside_it(tmp_path):
    """Issue #49 item 4: a package build on the host (``packaging/build-deb.sh``'s dist/, an
    install's build/ and egg-info) may write into the checkout while the tests run."""
    (tmp_path / "tests").mkdir()
    (tmp_path / ".gitignore").write_text((CHECKOUT / ".gitignore").read_text())  # the real one
    before = checkout_entries(tmp_path)
    for folder in ("dist", "build", "smartarray_agent.egg-info", "tests/__pycache__"):
        (tmp_path / folder).mkdir()
    (tmp_path / "audit.jsonl").write_text("")  # a test's relative path: the run's own
    (tmp_path / "tests" / "cli.lock").write_text("")
    (tmp_path / "sim-state").mkdir()
    assert left_behind(tmp_path, before) == ["audit.jsonl", "sim-state/", "tests/cli.lock"]


def test_the_agents_places_are_the_tests_own(tmp_path_factory):
    """Root's fixed places too, for the commands run in this process."""
    base = tmp_path_factory.getbasetemp()
    for place in (default_lock_path(), default_audit_file(), default_state_dir("gen10"),
                  config.DEFAULT_PATH, Path(os.environ["XDG_RUNTIME_DIR"])):
        assert place.is_relative_to(base), place
    assert str(default_audit_file()) != AUDIT_FILE and str(config.DEFAULT_PATH) != CONFIG_FILE


def test_a_change_run_in_this_process_keeps_its_record_to_the_test():
    result = agent("set-cache-ratio", "25/75", "--slot", "0", "--simulate",
                   "gen9-battery")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in default_audit_file().read_text().splitlines()]
    assert [entry["event"] for entry in entries] == ["intent", "outcome"]
    me = pwd.getpwuid(os.getuid()).pw_name
    assert entries[0]["user"] == f"{os.environ['SUDO_USER']} (via sudo as {me})"


@pytest.mark.skipif(os.geteuid() != 0, reason="the filter is installed for root only")
def test_a_command_run_in_this_process_as_root_does_not_confine_it():
    """The seccomp filter (confine.py) would refuse a signal to PID 1 with EPERM."""
    assert agent("status", "--simulate", "gen9-battery").returncode == 0
    os.kill(1, 0)  # no signal sent: only whether it may be
