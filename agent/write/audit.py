"""The audit trail of the write path: every change, refusal and decline, to an append-only
JSON-lines file and to syslog (which the journal collects)."""

from __future__ import annotations

import json
import os
import pwd
import socket
import syslog
from datetime import UTC, datetime
from pathlib import Path

SYSTEM_AUDIT_FILE = Path("/var/lib/smartarray-agent/audit.jsonl")


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


class AuditLog:
    def __init__(self, path: Path, *, to_syslog: bool = True, user: str | None = None) -> None:
        """``user`` names who acts when it is not the process's user (the daemon's guard)."""
        self.path = Path(path)
        self.to_syslog = to_syslog
        self.user = user

    def record(self, entry: dict) -> dict:
        """Write ``entry`` with time, user and host added; raise OSError when the file
        cannot be written (a change must not go unrecorded)."""
        full = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "user": self.user or current_user(),
            "host": socket.gethostname(),
            **entry,
        }
        line = json.dumps(full, sort_keys=False, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.to_syslog:
            refused = entry.get("verdict") == "refused"
            priority = syslog.LOG_WARNING if refused else syslog.LOG_NOTICE
            syslog.openlog("smartarray-agent", 0, syslog.LOG_DAEMON)
            syslog.syslog(priority, f"audit: {entry.get('message', '')} "
                                    f"{json.dumps(full, separators=(',', ':'))}")
        return full
