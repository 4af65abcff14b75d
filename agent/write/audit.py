"""The audit trail of the write path, to an append-only JSON-lines file (each line flushed
to disk before the next step) and to syslog (which the journal collects).

A change is written ahead: an ``intent`` record before the vendor command is sent, an
``outcome`` record after it, in every case. A refusal, a decline, a dry run and a change
already made have one ``outcome`` record. docs/cli.md ("The audit record") lists the keys.

The file must be a regular file or absent (:meth:`AuditLog.check`, before the host lock is
taken): it is opened without following a symlink and without blocking, so a FIFO or a
device is refused, never waited on. Every record goes to syslog, whether or not the file
took it. A write that fails or does not finish within ``WRITE_TIMEOUT_S`` raises
:class:`AuditError`; what it may have written is cut off again, and a line left torn all the
same (a crash mid-write) is ended before the next record, so one bad line never takes the
next one with it. :func:`read_log` reads the file back, skipping torn lines and saying where
they are.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import pwd
import socket
import stat
import syslog
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from smartarray_agent.locations import AUDIT_FILE

SYSTEM_AUDIT_FILE = Path(AUDIT_FILE)
WRITE_TIMEOUT_S = 5.0
_OPEN_FLAGS = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
               | os.O_NONBLOCK)


def default_audit_file() -> Path:
    if os.geteuid() == 0:
        return SYSTEM_AUDIT_FILE
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "smartarray-agent" / "audit.jsonl"


def current_user() -> str:
    """Who asked: the user behind sudo where there is one, else the process's user."""
    try:
        name = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        name = str(os.getuid())
    sudo_user = os.environ.get("SUDO_USER")
    return f"{sudo_user} (via sudo as {name})" if sudo_user and sudo_user != name else name


class AuditError(RuntimeError):
    """The audit file cannot be written; the message names it and the reason."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write the audit file {path}: {reason} (give a writable "
                         "--audit-file, or [audit] file in the configuration)")
        self.path = path


class AuditLog:
    def __init__(self, path: Path, *, to_syslog: bool = True, user: str | None = None) -> None:
        """``user`` names who acts when it is not the process's user (the daemon's guard)."""
        self.path = Path(path)
        self.to_syslog = to_syslog
        self.user = user

    def check(self) -> None:
        """Raise :class:`AuditError` unless the file is a regular file (not a symlink) or
        absent, and, for root, owned by root: the write path calls this before it takes the
        host lock, so a file that could block or point elsewhere stops a change early."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise AuditError(self.path, error.strerror or str(error)) from None
        problem = _problem(info)
        if problem is not None:
            raise AuditError(self.path, problem)

    def record(self, entry: dict) -> dict:
        """Write ``entry`` with time, user and host added, flushed to disk; raise
        :class:`AuditError` when the file cannot be written (a change must not go
        unrecorded). Syslog gets the record either way."""
        full = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "user": self.user or current_user(),
            "host": socket.gethostname(),
            **entry,
        }
        try:
            line = json.dumps(full, separators=(",", ":"), allow_nan=False) + "\n"
        except ValueError as error:  # NaN or infinity: strict JSON readers refuse them
            raise AuditError(self.path, f"the record is not valid JSON: {error}") from None
        failure: AuditError | None = None
        try:
            self._append_in_time(line.encode())
        except AuditError as error:
            failure = error
        if self.to_syslog:
            self._syslog(entry, line, failure)
        if failure is not None:
            raise failure
        return full

    def _syslog(self, entry: dict, line: str, failure: AuditError | None) -> None:
        notable = entry.get("outcome") in ("refused", "unknown", "failed")
        priority = (syslog.LOG_ERR if failure else
                    syslog.LOG_WARNING if notable else syslog.LOG_NOTICE)
        note = f" (NOT in the audit file: {failure})" if failure else ""
        syslog.openlog("smartarray-agent", 0, syslog.LOG_DAEMON)
        syslog.syslog(priority, f"audit: {entry.get('message', '')}{note} {line.rstrip()}")

    def _append_in_time(self, data: bytes) -> None:
        """:meth:`_append` in a thread of its own, given ``WRITE_TIMEOUT_S`` (a hung
        filesystem must not hold the host lock for ever)."""
        errors: list[OSError] = []

        def append() -> None:
            try:
                self._append(data)
            except OSError as error:
                errors.append(error)

        writer = threading.Thread(target=append, name="audit-write", daemon=True)
        writer.start()
        writer.join(WRITE_TIMEOUT_S)
        if writer.is_alive():
            raise AuditError(self.path, f"the write did not finish in {WRITE_TIMEOUT_S:g} s")
        if errors:
            raise AuditError(self.path, errors[0].strerror or str(errors[0]))

    def _append(self, data: bytes) -> None:
        self.path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        fd = os.open(self.path, _OPEN_FLAGS, 0o640)
        try:
            info = os.fstat(fd)
            problem = _problem(info)
            if problem is not None:
                raise OSError(problem)
            start = info.st_size
            if start and os.pread(fd, 1, start - 1) != b"\n":
                data = b"\n" + data  # a torn last line: this record starts a line of its own
            try:
                left = memoryview(data)
                while left:  # a short write is retried: the next one says why (disk full)
                    left = left[os.write(fd, left):]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):  # else the next record's newline ends it
                    os.ftruncate(fd, start)  # take back the part written
                raise
        finally:
            os.close(fd)


def _problem(info: os.stat_result) -> str | None:
    """Why a file with this status may not be the audit file; None when it may."""
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if os.geteuid() == 0 and info.st_uid != 0:
        return f"it is owned by uid {info.st_uid}, not root"
    return None


@dataclass(frozen=True)
class AuditReading:
    records: list[dict]
    torn_lines: list[int]  # 1-based line numbers that are not a JSON object


def read_log(path: Path) -> AuditReading:
    """Every record of the audit file (gzip-compressed when its name ends ``.gz``, as
    logrotate leaves a rotated one), in order; a torn line is skipped and its number
    reported."""
    records: list[dict] = []
    torn: list[int] = []
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                records.append(record)
            else:
                torn.append(number)
    return AuditReading(records, torn)
