"""Read a saved capture for ``--input``: clear one-line errors for anything unusable."""

from __future__ import annotations

import sys
from pathlib import Path


class InputError(ValueError):
    pass


_MAX_BYTES = 64 * 2**20
_MAX_CONTROL_SHARE = 0.05  # more control bytes than this and it is binary, not a capture


def read_capture(path: str) -> str:
    """The text of ``path`` (``-`` is standard input)."""
    data = _read_bytes(path)
    name = "standard input" if path == "-" else path
    if not data.strip():
        raise InputError(f"{name} is empty")
    if _looks_binary(data):
        raise InputError(f"{name} is binary data, not a saved CLI output")
    return data.decode("utf-8", errors="replace")


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read(_MAX_BYTES + 1)
    file = Path(path)
    try:
        if file.is_dir():
            raise InputError(f"{path} is a directory, not a file")
        with file.open("rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None
    if len(data) > _MAX_BYTES:
        raise InputError(f"{path} is larger than {_MAX_BYTES // 2**20} MiB")
    return data


def _looks_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    control = sum(1 for byte in data if byte < 32 and byte not in b"\t\n\r\f\v\x1b")
    if control > len(data) * _MAX_CONTROL_SHARE:
        return True
    text = data.decode("utf-8", errors="replace")
    return text.count("\ufffd") > len(text) * _MAX_CONTROL_SHARE
