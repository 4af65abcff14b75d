"""One way to replace a file that others read while it changes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to a hidden temporary file beside ``path`` (``.NAME.XXXX.tmp``, which
    no reader of ``*.prom`` takes), with ``mode``, flushed to disk, then rename it over
    ``path``: a reader sees the old file or the new one, never a part. OSError when it
    cannot; the temporary file does not stay behind."""
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
