"""Read a saved capture for ``--input``, with a one-line error for anything unusable: at most
``MAX_BYTES`` (room for a host 25 times the simulator's ``large``), refused from its size or
as soon as standard input passes it, and only a regular file or standard input (a FIFO or a
device may never end)."""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO


class InputError(ValueError):
    pass


MAX_BYTES = 4 * 2**20
_CHUNK = 2**20
_MAX_CONTROL_SHARE = 0.05  # more control bytes than this and it is binary, not a capture
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f\v\x1b")
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL)


def read_capture(path: str) -> str:  # "-": standard input
    name = "standard input" if path == "-" else path
    data = _read_capped(sys.stdin.buffer, name) if path == "-" else _read_file(path)
    if not data.strip():
        raise InputError(f"{name} is empty")
    if _looks_binary(data):
        raise InputError(f"{name} is binary data, not a saved CLI output")
    return data.decode("utf-8", errors="replace")


def _too_large(name: str) -> InputError:
    return InputError(f"{name} is larger than {MAX_BYTES // 2**20} MiB: no Smart Array CLI "
                      "output is that long")


def _read_file(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path} is not a regular file (a FIFO or device is refused; "
                             "use --input - to read a pipe)")
        raise _too_large(path)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        try:
            return _read_capped(handle, path)
        except OSError as error:
            raise InputError(f"{path}: {error.strerror or error}") from None


def _read_capped(handle: BinaryIO, name: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := handle.read(_CHUNK):
        size += len(chunk)
        if size > MAX_BYTES:
            raise _too_large(name)
        chunks.append(chunk)
    return b"".join(chunks)


def _looks_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    control = len(data.translate(None, _NOT_CONTROL))
    if control > len(data) * _MAX_CONTROL_SHARE:
        return True
    text = data.decode("utf-8", errors="replace")
    return text.count("\ufffd") > len(text) * _MAX_CONTROL_SHARE
