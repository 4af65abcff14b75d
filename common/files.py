"""One way to replace a file that others read while it changes."""

from __future__ import annotations

import os
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
