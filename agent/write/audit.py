"""The audit trail of the write path, to an append-only JSON-lines file (each line flushed
to disk before the next step) and to syslog (which the journal collects).

A change is written ahead: an ``intent`` record before the vendor command is sent, an
``outcome`` record after it, in every case. A refusal, a decline, a dry run and a change
already made have one ``outcome`` record. docs/cli.md ("The audit record") lists the keys."""

from __future__ import annotations

import json
import os
import pwd
import socket
import syslog
from datetime import UTC, datetime
from pathlib import Path

from smartarray_agent.locations import AUDIT_FILE

SYSTEM_AUDIT_FILE = Path(AUDIT_FILE)


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

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write the audit file {path}: {error.strerror or error} "
                         "(give a writable --audit-file, or [audit] file in the configuration)")
        self.path = path


class AuditLog:
    def __init__(self, path: Path, *, to_syslog: bool = True, user: str | None = None) -> None:
        """``user`` names who acts when it is not the process's user (the daemon's guard)."""
        self.path = Path(path)
        self.to_syslog = to_syslog
        self.user = user

    def record(self, entry: dict) -> dict:
        """Write ``entry`` with time, user and host added, flushed to disk; raise
        :class:`AuditError` when the file cannot be written (a change must not go
        unrecorded)."""
        full = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "user": self.user or current_user(),
            "host": socket.gethostname(),
            **entry,
        }
        line = json.dumps(full, sort_keys=False, separators=(",", ":")) + "\n"
        try:
            self._append(line.encode())
        except OSError as error:
            raise AuditError(self.path, error) from None
        if self.to_syslog:
            notable = entry.get("outcome") in ("refused", "unknown", "failed")
            priority = syslog.LOG_WARNING if notable else syslog.LOG_NOTICE
            syslog.openlog("smartarray-agent", 0, syslog.LOG_DAEMON)
            syslog.syslog(priority, f"audit: {entry.get('message', '')} "
                                    f"{json.dumps(full, separators=(',', ':'))}")
        return full

    def _append(self, data: bytes) -> None:
        self.path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            if os.write(fd, data) != len(data):
                raise OSError(28, "short write (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)
