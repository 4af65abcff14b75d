"""The vendor CLI's version, remembered between processes.

A one-shot ``ctrl all show config detail`` does not print the version, and asking the CLI
(``version``) costs a whole second start of it, 2 s and more: every ``check``, ``status`` and
``metrics`` run would pay it. So the answer is kept in one small JSON file beside the host
lock (:func:`smartarray_agent.vendor.version_file`), under the CLI's command and, for every
file that command names (the program; the simulator's interpreter and scenario), its path,
mtime and size: an install or upgrade changes them, and the CLI is asked again.

The file is an optimisation only. One that is missing, unreadable, not a regular file of this
user, writable by others or not of this shape is not used (the CLI is asked), and a failure to
write it is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from smartarray_agent.common.files import replace_file
from smartarray_agent.common.trust import distrust

_MAX_BYTES = 64 * 1024
_MAX_VERSION = 64  # characters: longer is not a version the parser gives


def cli_key(argv: Sequence[str]) -> list[object]:
    """What identifies a CLI: its command and, for each word of it that is the absolute path
    of a file, that file's path, mtime and size."""
    key: list[object] = [list(argv)]
    for word in argv:
        with contextlib.suppress(OSError):
            info = os.stat(word)
            if os.path.isabs(word) and stat.S_ISREG(info.st_mode):
                key.append([word, info.st_mtime_ns, info.st_size])
    return key


class VersionCache:
    """The remembered version of one CLI at a time, in the file ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, argv: Sequence[str]) -> str | None:
        """The version remembered for ``argv`` ("" when that CLI could not tell), or None
        when there is none for it as it is now."""
        record = self._read()
        version = record.get("version") if record.get("cli") == cli_key(argv) else None
        return version if isinstance(version, str) and len(version) <= _MAX_VERSION else None

    def put(self, argv: Sequence[str], version: str) -> None:
        """Remember ``version`` for ``argv``, replacing what was there (atomically)."""
        text = json.dumps({"cli": cli_key(argv), "version": version[:_MAX_VERSION]}) + "\n"
        with contextlib.suppress(OSError):
            replace_file(self.path, text.encode(), 0o600)

    def _read(self) -> dict[str, object]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return {}
        with os.fdopen(fd, "rb") as handle:
            if distrust(os.fstat(fd), kind="file", owners=(os.geteuid(),)) is not None:
                return {}
            try:
                record = json.loads(handle.read(_MAX_BYTES))
            except (OSError, ValueError):
                return {}
        return record if isinstance(record, dict) else {}
