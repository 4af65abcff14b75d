"""``smartarray-agent status`` as a user runs it, on real files; in this process (CliRunner,
tests/agent_cli.py): what is tested is the command, not the process."""

from __future__ import annotations

import json
import os

import pytest

from .agent_cli import agent
from .captures import EXPECTED, REAL, needs_captures


@needs_captures
def test_table_from_a_saved_capture():
    capture = REAL / "ssacli-ctrl-all-show-config-detail-P400i-1.txt"
    result = agent("status", "--input", str(capture))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("Smart Array P400i in slot 0 (embedded)\n")
    assert "temporarily disabled, 256 MiB" in out
    assert "Cache disabled; low batteries." in out
    assert "25% read / 75% write" in out
    assert "no-battery off, drive off" in out
    assert "batteries x1, Failed (Replace Batteries)" in out


@needs_captures
def test_json_is_the_contract():
    name = "ssacli-ctrl-all-show-config-detail-P408i-a-1"
    result = agent("status", "--json", "-i", str(REAL / f"{name}.txt"))
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)["controllers"][0]
    want = json.loads((EXPECTED / f"{name}.json").read_text())["controllers"][0]
    for block in ("cache", "backup_power"):
        assert {k: got[block][k] for k in want[block]} == want[block]
    assert len(got["physical_drives"]) == want["physical_drive_count"]


@needs_captures
def test_stdin_input():
    data = (REAL / "hpacucli-ctrl-all-show-status-P420i-1.txt").read_bytes()
    result = agent("status", "--json", "--input", "-", stdin=data)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["controllers"][0]["backup_power"]["status"] == "recharging"


@needs_captures
def test_vendor_error_is_reported_with_non_zero_exit():
    result = agent("status", "-i", str(REAL / "hpssacli-ctrl-all-show-no-controllers-none-1.txt"))
    assert result.returncode == 1
    err = result.stderr
    assert "Error: No controllers detected." in err
    assert "modprobe sg" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"", "is empty"),
        (b"\n  \n", "is empty"),
        (bytes(range(256)) * 4, "binary data"),
        (b"just some notes, not CLI output\n", "not Smart Array CLI output"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "capture.txt"
    if content is not None:
        path.write_bytes(content)
    result = agent("status", "--input", str(path))
    assert result.returncode == 2
    err = result.stderr
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_no_vendor_cli_names_what_was_looked_for(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    result = agent("status", "--cli", str(tmp_path / "ssacli"), env=env)
    assert result.returncode == 3
    err = result.stderr
    assert f"the vendor CLI {tmp_path / 'ssacli'} does not exist" in err
    assert "--simulate SCENARIO" in err  # where to go without hardware


def test_a_cli_path_that_is_not_a_program_says_so(tmp_path):
    result = agent("status", "--cli", "/etc/passwd")
    assert result.returncode == 3
    err = result.stderr
    assert "/etc/passwd is not an executable file" in err and "name it with" not in err


def test_status_json_says_why_it_cannot_read_in_json(tmp_path):
    result = agent("status", "--json", "--cli", str(tmp_path / "ssacli"))
    assert result.returncode == 3
    error = json.loads(result.stdout)["error"]
    assert error["exit_code"] == 3 and "does not exist" in error["message"]


def test_a_truncated_input_is_read_with_a_warning(tmp_path):
    capture = tmp_path / "cut.txt"
    capture.write_text("Smart Array P440ar in Slot 0 (Embedded)\n   Controller Status: O")
    result = agent("status", "--input", str(capture))
    assert result.returncode == 0
    assert "may be truncated" in result.stderr


@needs_captures
def test_runs_the_given_cli_and_parses_its_output(tmp_path):
    capture = REAL / "hpssacli-ctrl-all-show-detail-P440ar-H241-1.txt"
    fake = tmp_path / "ssacli"
    fake.write_text(f"#!/bin/sh\n[ \"$*\" = 'ctrl all show config detail' ] || exit 9\n"
                    f"[ \"$LC_ALL\" = C ] && [ \"$INFOMGR_BYPASS_NONSA\" = 1 ] || exit 8\n"
                    f"cat '{capture}'\n")
    fake.chmod(0o755)
    result = agent("status", "--json", "--cli", str(fake), "--lock-file", str(tmp_path / "lock"))
    assert result.returncode == 0, result.stderr
    controllers = json.loads(result.stdout)["controllers"]
    assert [c["slot"] for c in controllers] == ["0", "4", "5"]


def test_a_hung_cli_is_killed_at_the_timeout(tmp_path):
    fake = tmp_path / "ssacli"
    fake.write_text("#!/bin/sh\nsleep 300\n")
    fake.chmod(0o755)
    result = agent("status", "--cli", str(fake), "--timeout", "1",
                   "--lock-file", str(tmp_path / "lock"))
    assert result.returncode == 1
    assert "did not finish in 1 s" in result.stderr
