"""Years of audit history (issue #50 item 5): a reader of the unfinished changes (``status``,
``check``, a change, the daemon's round) reads what was written since the last reader, not
the whole log, and stays right through a rotation, two writers at once, an unfinished last
line, and a mark that no longer fits the log."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.history import unfinished

from .agent_cli import agent
from .test_packaging_config import LOGROTATE

PAD = "x" * 600  # a record about as long as the write path's


def line(event: str, ident: str) -> bytes:
    return json.dumps({"id": ident, "event": event, "outcome": None, "message": PAD,
                       "controller": {"slot": "0"}}).encode() + b"\n"


def history(audit: Path, files: int = 6, records: int = 4000) -> str:
    """``files`` rotated files of closed changes, as logrotate leaves them (all but the
    newest compressed), with one intent left open in the oldest; its id."""
    open_id = uuid.uuid4().hex
    for number in range(files):
        data = b"".join(line(event, ident) for ident in (uuid.uuid4().hex
                                                        for _ in range(records // 2))
                        for event in ("intent", "outcome"))
        if number == 0:
            data = line("intent", open_id) + data
        rotated = audit.with_name(f"{audit.name}-20261124-{1_700_000_000 + number}")
        if number < files - 1:
            rotated.with_name(rotated.name + ".gz").write_bytes(gzip.compress(data, 1))
        else:
            rotated.write_bytes(data)
    return open_id


def bytes_read() -> int:
    """What this process has read through system calls so far (/proc/self/io ``rchar``)."""
    io = Path("/proc/self/io").read_text()
    return int(next(row.split()[1] for row in io.splitlines() if row.startswith("rchar")))


def on_disk(audit: Path) -> int:
    return sum(path.stat().st_size for path in audit.parent.glob(f"{audit.name}*"))


def test_a_reader_reads_what_was_written_since_the_last_one_not_the_history(tmp_path):
    audit = tmp_path / "audit.jsonl"
    open_id = history(audit)
    log = AuditLog(audit, to_syslog=False)
    log.record({"id": "a", "event": "intent"})
    assert [c.ident for c in unfinished(audit)] == [open_id, "a"]  # reads it all, once
    log.record({"id": "a", "event": "outcome"})
    log.record({"id": "b", "event": "intent"})
    before = bytes_read()
    assert [c.ident for c in unfinished(audit)] == [open_id, "b"]
    assert bytes_read() - before < 64 * 1024 < on_disk(audit) // 20


def test_check_with_a_long_history_reads_no_more_than_without_it(tmp_path):
    """``check`` (which reconciles) on a host with history and on one without, each run
    once before: the second runs read as much. The bytes counted include the simulator's,
    whose reads the kernel adds to its parent's when it ends, the same on both hosts."""
    env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(tmp_path / "sim"))
    read = {}
    for name in ("with", "without"):
        (tmp_path / name).mkdir()
        audit = tmp_path / name / "audit.jsonl"
        if name == "with":
            history(audit)
        config = tmp_path / name / "agent.toml"
        config.write_text(f'[audit]\nfile = "{audit}"\n[sysfs]\nenabled = false\n')
        check = ("check", "--simulate", "gen9-battery", "--config", config,
                 "--lock-file", tmp_path / name / "cli.lock")
        first = agent(*check, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        before = bytes_read()
        again = agent(*check, env=env)
        read[name] = bytes_read() - before
        assert again.returncode == 0, again.stdout + again.stderr
        assert "unfinished" not in again.stderr  # the open one was reconciled at the first
    assert read["with"] - read["without"] < on_disk(tmp_path / "with" / "audit.jsonl") // 10


def test_a_rotation_after_the_last_reader_is_followed_into_the_renamed_file(tmp_path):
    audit = tmp_path / "audit.jsonl"
    log = AuditLog(audit, to_syslog=False)
    log.record({"id": "kept", "event": "intent"})
    log.record({"id": "closed", "event": "intent"})
    assert [c.ident for c in unfinished(audit)] == ["kept", "closed"]
    log.record({"id": "late", "event": "intent"})  # after the mark, before the rotation
    rotated = audit.with_name(f"{audit.name}-20261124-1700000000")
    os.rename(audit, rotated)
    rotated.with_name(rotated.name + ".gz").write_bytes(gzip.compress(rotated.read_bytes()))
    rotated.unlink()
    log.record({"id": "closed", "event": "outcome"})
    assert [c.ident for c in unfinished(audit)] == ["kept", "late"]


def test_an_unfinished_last_line_is_read_once_the_next_record_ends_it(tmp_path):
    audit = tmp_path / "audit.jsonl"
    whole = line("intent", "torn-then-ended")
    audit.write_bytes(line("intent", "first") + whole[:40])  # a writer mid-line
    assert [c.ident for c in unfinished(audit)] == ["first"]
    with audit.open("ab") as file:
        file.write(whole[40:])
    assert [c.ident for c in unfinished(audit)] == ["first", "torn-then-ended"]


@pytest.mark.parametrize("change", ["cut back", "rewritten", "mark writable by others",
                                    "mark not JSON", "mark a symbolic link"])
def test_a_mark_that_no_longer_fits_or_is_not_trusted_means_reading_it_all(tmp_path, change):
    audit = tmp_path / "audit.jsonl"
    mark = audit.with_name("audit.jsonl.mark")
    log = AuditLog(audit, to_syslog=False)
    for ident in ("one", "two", "three"):
        log.record({"id": ident, "event": "intent"})
    assert len(unfinished(audit)) == 3 and mark.exists()
    expected = ["one", "two", "three"]
    if change == "cut back":  # as a writer takes back a write that failed
        data = audit.read_bytes()
        audit.write_bytes(data[:data.rfind(b"\n", 0, -1) + 1])
        expected = ["one", "two"]
    elif change == "rewritten":
        audit.write_bytes(line("intent", "other") + line("outcome", "other"))
        expected = []
    elif change == "mark writable by others":
        mark.write_text(mark.read_text().replace('"three"', '"ghost"'))
        mark.chmod(0o666)
    elif change == "mark not JSON":
        mark.write_text("{")
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_text(mark.read_text().replace('"three"', '"ghost"'))
        mark.unlink()
        mark.symlink_to(elsewhere)
    assert [c.ident for c in unfinished(audit)] == expected


@pytest.mark.skipif(shutil.which("logrotate") is None,
                    reason="needs logrotate (apt-get install logrotate)")
def test_readers_stay_right_under_two_writers_and_logrotate(tmp_path):
    """Two writers (the daemon's guard and an operator's change) open and close changes,
    leaving some open, while the packaged logrotate entry is forced again and again and a
    reader reads: every read holds every change open throughout it and none never opened,
    and the last read is exactly the changes left open."""
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "logrotate.conf"
    config.write_text(LOGROTATE.read_text().replace("/var/lib/smartarray-agent/audit.jsonl",
                                                    str(audit)))
    clock = iter(range(10**9))
    clock_lock = threading.Lock()

    def tick() -> float:
        with clock_lock:
            return next(clock)

    never = float("inf")
    # id -> when its intent was begun and written, its outcome begun and written
    changes: dict[str, list[float]] = {}
    writing = threading.Event()

    def write(name: str) -> None:
        log = AuditLog(audit, to_syslog=False, user=name)
        for number in range(300):
            times = changes[f"{name}-{number}"] = [tick(), never, never, never]
            log.record({"id": f"{name}-{number}", "event": "intent", "message": PAD})
            times[1] = tick()
            writing.set()
            if number % 7:
                times[2] = tick()
                log.record({"id": f"{name}-{number}", "event": "outcome", "message": PAD})
                times[3] = tick()

    writers = [threading.Thread(target=write, args=(name,)) for name in ("guard", "alice")]
    for writer in writers:
        writer.start()
    writing.wait(timeout=60)
    reads = []
    while any(writer.is_alive() for writer in writers):
        rotated = subprocess.run(["logrotate", "-f", "-s", str(tmp_path / "state"),
                                  str(config)], capture_output=True, text=True, timeout=60)
        assert rotated.returncode == 0 or "already exists" in rotated.stderr, rotated.stderr
        began = tick()
        found = {change.ident for change in unfinished(audit)}
        reads.append((began, tick(), found))
    for writer in writers:
        writer.join()
    assert len(reads) > 1 and len(list(tmp_path.glob("audit.jsonl-*"))) > 1
    for began, ended, found in reads:
        held = {i for i, times in changes.items() if times[1] < began and times[2] > ended}
        assert held <= found, f"open throughout a read, not found: {held - found}"
        gone = {i for i, times in changes.items() if times[3] < began or times[0] > ended}
        assert not found & gone, f"closed before a read, or opened after, found: {found & gone}"
    left = {i for i, times in changes.items() if times[2] == never}
    assert {change.ident for change in unfinished(audit)} == left
