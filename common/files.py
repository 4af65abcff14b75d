"""One way to replace a file that others read while it changes, and one to read a file of
bounded size that someone may have swapped for a FIFO."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` with ``mode`` to a hidden ``.NAME.XXXX.tmp`` beside ``path`` (no reader of
    ``*.prom`` takes it), flushed to disk, then rename it over ``path``: a reader sees the old
    file or the new one. OSError when it cannot, leaving nothing behind."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_regular_file(path: Path | str, limit: int) -> tuple[os.stat_result, bytes | None]:
    """The status of ``path`` and up to ``limit + 1`` of its bytes (more than ``limit``: too
    large, the caller's refusal), or None for the bytes when it is not a regular file: opened
    without blocking and checked on that descriptor, so that a FIFO or device is refused, not
    waited on. OSError when it cannot be opened or read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return info, None
        with open(fd, "rb", closefd=False) as handle:
            return info, handle.read(limit + 1)
    finally:
        os.close(fd)
