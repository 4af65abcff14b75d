"""A record's fate is known when it is reported (issue #50 item 9): a write the audit writer
reports as not written never lands later, whatever held it up (another writer holding the
file, a file system that does not answer), and two writers at once never cut each other's
records. Each is released from the test once the record was reported."""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from smartarray_agent.write import audit as writer
from smartarray_agent.write.audit import AuditError, AuditLog


def in_file(audit: Path, ident: str) -> bool:
    return audit.exists() and f'"id":"{ident}"'.encode() in audit.read_bytes()


def writers_ended() -> None:
    """Wait for every audit writer thread, those called off included, to end."""
    for thread in threading.enumerate():
        if thread.name == "audit-write":
            thread.join(timeout=60)
            assert not thread.is_alive()


def fate(log: AuditLog, ident: str) -> bool:
    """Whether ``record`` reported the record written."""
    try:
        log.record({"id": ident, "event": "intent"})
    except AuditError:
        return False
    return True


def held_by_another_writer(audit: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    fd = os.open(audit, os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return lambda: os.close(fd)


def file_system_not_answering(audit: Path,
                              monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Opening the audit file waits until released, as on a server that does not answer."""
    answer = threading.Event()
    real_open = os.open

    def open_(path: object, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == audit:
            answer.wait(timeout=60)
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", open_)
    return answer.set


@pytest.mark.parametrize("hold", [held_by_another_writer, file_system_not_answering])
def test_a_write_reported_not_written_never_lands_later(tmp_path, monkeypatch, hold):
    audit = tmp_path / "audit.jsonl"
    release = hold(audit, monkeypatch)
    monkeypatch.setattr(writer, "WRITE_TIMEOUT_S", 0.2)
    try:
        written = fate(AuditLog(audit, to_syslog=False), "held")
    finally:
        release()
    writers_ended()
    assert written is False
    assert not in_file(audit, "held")


def test_two_writers_at_once_never_cut_each_others_records(tmp_path, monkeypatch):
    """One writer's flush fails after a wait (the disk), and it takes back what it wrote,
    while a second writer tries to append: each record is in the file exactly when its
    writer said so."""
    audit = tmp_path / "audit.jsonl"
    AuditLog(audit, to_syslog=False).record({"id": "before", "event": "intent"})
    flushing, fail = threading.Event(), threading.Event()
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            flushing.set()
            fail.wait(timeout=60)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    first: list[bool] = []
    failing = threading.Thread(target=lambda: first.append(
        fate(AuditLog(audit, to_syslog=False), "failing")))
    failing.start()
    assert flushing.wait(timeout=60)
    monkeypatch.setattr(writer, "WRITE_TIMEOUT_S", 0.5)  # the first waits on in its thread
    second = fate(AuditLog(audit, to_syslog=False), "second")
    fail.set()
    failing.join(timeout=60)
    writers_ended()
    assert first == [False] and not in_file(audit, "failing")
    assert in_file(audit, "second") is second
    assert in_file(audit, "before")


def test_a_file_rotated_while_the_writer_waits_for_it_gets_no_record(tmp_path):
    """A writer that opened the file, then waited for the lock while logrotate renamed it,
    writes to the file now at the path: a record appended to the renamed one would land
    behind what readers had read, and a reader would never see it (history.py goes on from
    its mark in the newest file)."""
    audit = tmp_path / "audit.jsonl"
    release = held_by_another_writer(audit, None)  # type: ignore[arg-type]
    recorded = threading.Thread(target=fate, args=(AuditLog(audit, to_syslog=False), "late"))
    recorded.start()
    deadline = time.monotonic() + 60
    while sum(os.path.realpath(f"/proc/self/fd/{fd}") == str(audit)
              for fd in os.listdir("/proc/self/fd")) < 2:  # the writer has it open too
        assert time.monotonic() < deadline
        time.sleep(0.01)
    rotated = audit.rename(tmp_path / "audit.jsonl-20261129-1")
    release()
    recorded.join(timeout=60)
    writers_ended()
    assert in_file(audit, "late") and not in_file(rotated, "late")
