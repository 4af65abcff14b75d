"""The write path's audit trail: an append-only JSON-lines file and syslog (docs/cli.md, "The
audit record"). An ``intent`` is written before a vendor command is sent, an ``outcome``
after it; a change that sends nothing has the outcome alone. The file is a regular file or
absent, opened without following a link or blocking; a writer holds its ``flock`` while it
appends, so two writers never cut each other's records. A record is reported written exactly
when it is in the file: a write not begun within ``WRITE_TIMEOUT_S`` is called off and never
lands later, one begun is waited for, one that fails is cut off again. A torn last line (a
crash mid-write) is ended before the next record. agent/write/history.py reads it back.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import socket
import syslog
import threading
from datetime import UTC, datetime
from pathlib import Path

from smartarray_agent.common.trust import distrust
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
    """The audit file cannot be written (or read); the message names it and the reason."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write the audit file {path}: {reason} (give a writable "
                         "--audit-file, or [audit] file in the configuration)")
        self.path = path


def distrusted(info: os.stat_result) -> str | None:
    """Why a file with this status may not be the audit file (common/trust.py judges): not
    a regular file, or for root one that root does not own; None when it may."""
    found = distrust(info, kind="file", owners=(0,) if os.geteuid() == 0 else (info.st_uid,),
                     forbidden=0)
    return None if found is None else found.describe("it")


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
            problem = distrusted(os.lstat(self.path))
        except FileNotFoundError:
            return
        except OSError as error:
            problem = error.strerror or str(error)
        if problem is not None:
            raise AuditError(self.path, problem)

    def record(self, entry: dict) -> dict:
        """Write ``entry`` with time, user and host added, flushed to disk; raise
        :class:`AuditError` when it is not in the file (a change must not go unrecorded).
        Syslog gets the record either way."""
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
        """:meth:`_append` in a thread of its own, which may begin to write only while the
        caller still waits (a hung file system must not hold the host lock for ever). The
        first to take ``ticket`` decides: the writer, to write; the caller, past
        ``WRITE_TIMEOUT_S``, to call the write off. A write begun is waited for to its end."""
        ticket = threading.Lock()
        errors: list[OSError] = []

        def append() -> None:
            try:
                self._append(data, ticket)
            except OSError as error:
                errors.append(error)

        writer = threading.Thread(target=append, name="audit-write", daemon=True)
        writer.start()
        writer.join(WRITE_TIMEOUT_S)
        if writer.is_alive() and ticket.acquire(blocking=False):
            raise AuditError(self.path, f"the file could not be opened and locked in "
                                        f"{WRITE_TIMEOUT_S:g} s: not written, and never will be")
        writer.join()
        if errors:
            raise AuditError(self.path, errors[0].strerror or str(errors[0]))

    def _append(self, data: bytes, ticket: threading.Lock) -> None:
        self.path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        fd = self._open_locked()
        try:
            if not ticket.acquire(blocking=False):
                return  # called off: the caller reported it not written
            start = os.fstat(fd).st_size
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

    def _open_locked(self) -> int:
        """The file at the path, opened and locked (the lock released when it is closed). A
        file renamed by logrotate while this writer waited for the lock is let go and the
        path opened again: a record appended there would land behind what readers have read
        (history.py goes on from its mark in the newest file)."""
        while True:
            fd = os.open(self.path, _OPEN_FLAGS, 0o640)
            try:
                opened = os.fstat(fd)
                problem = distrusted(opened)
                if problem is not None:
                    raise OSError(problem)
                fcntl.flock(fd, fcntl.LOCK_EX)
                now = os.stat(self.path, follow_symlinks=False)
                if (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino):
                    return fd
            except FileNotFoundError:  # renamed, and no new file yet: open it again
                pass
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
