"""Read a saved capture for ``--input``: a regular file or standard input (a FIFO or a device
may never end) of at most ``MAX_BYTES``, room for a host 25 times the simulator's ``large``."""

from __future__ import annotations

import stat
import sys

from smartarray_agent.common.files import read_regular_file


class InputError(ValueError):
    pass


MAX_BYTES = 4 * 2**20
_MAX_CONTROL_SHARE = 0.05  # more control bytes than this and it is binary, not a capture
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f\v\x1b")
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL)


def read_capture(path: str) -> str:  # "-": standard input
    name = "standard input" if path == "-" else path
    data = sys.stdin.buffer.read(MAX_BYTES + 1) if path == "-" else _read_file(path)
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is larger than {MAX_BYTES // 2**20} MiB: no Smart Array CLI "
                         "output is that long")
    if not data.strip():
        raise InputError(f"{name} is empty")
    if _looks_binary(data):
        raise InputError(f"{name} is binary data, not a saved CLI output")
    return data.decode("utf-8", errors="replace")


def _read_file(path: str) -> bytes:
    try:
        info, data = read_regular_file(path, MAX_BYTES)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path} is a directory, not a file")
    if data is None:
        raise InputError(f"{path} is not a regular file (a FIFO or device is refused; use "
                         "--input - to read a pipe)")
    return data


def _looks_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    control = len(data.translate(None, _NOT_CONTROL))
    if control > len(data) * _MAX_CONTROL_SHARE:
        return True
    text = data.decode("utf-8", errors="replace")
    return text.count("\ufffd") > len(text) * _MAX_CONTROL_SHARE
