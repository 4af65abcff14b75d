"""The audit log read back: its unfinished changes, the intents that no outcome follows,
from the mark the last reader left (docs/cli.md, "Unfinished changes", tells the rules).
The mark is a cache: the log is the record. A line that is not a JSON object is no record."""

from __future__ import annotations

import contextlib
import glob
import gzip
import hashlib
import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ValidationError

from smartarray_agent.common.files import replace_file
from smartarray_agent.common.trust import distrust
from smartarray_agent.write.audit import AuditError, distrusted
from smartarray_agent.write.kinds import Change, Kind, Target

_ROTATED = re.compile(r"-\d{8}-(\d+)(?:\.gz)?")  # dateext, dateformat -%Y%m%d-%s, compress
_TAIL = 4096  # the bytes before a mark's place that must be as they were
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Mark(BaseModel):
    offset: int  # how far the newest file was read: the end of a line
    tail: str  # sha256 of the up to _TAIL bytes before offset
    open: dict[str, str]  # the lines of the intents open there, by id, in order


class _Event(BaseModel):
    """What following the changes takes of a record; pydantic's parser, four times as fast
    as the json module's, makes the first read of years of history bearable."""

    id: object = None
    event: object = None


@dataclass(frozen=True)
class UnfinishedChange:
    """An intent record with no outcome."""

    record: dict

    @property
    def ident(self) -> str:
        return str(self.record.get("id"))

    @property
    def controller(self) -> dict:
        return self.record.get("controller") or {}

    @property
    def target(self) -> Target:
        return Target.of(self.controller.get("slot"), self.controller.get("serial"))

    def names(self, slot: str | None, serial: str | None) -> bool:
        """Whether it is a change to the controller with this slot or serial."""
        return ((slot is not None and self.controller.get("slot") == slot)
                or (serial is not None and self.controller.get("serial") == serial))

    def change(self) -> Change | None:
        """The change it asked for, or None when the record does not say (a newer kind)."""
        requested = dict(self.record.get("requested") or {})
        try:
            kind = Kind(requested.pop("kind", None))
            return Change(kind, **requested)
        except (ValueError, TypeError):
            return None

    def describe(self) -> str:
        """``no-battery write cache off on slot 0, asked at 2026-11-24T10:00:00.000+00:00 by
        alice (record 3f2a...)``."""
        change = self.change()
        what = change.describe() if change else str(self.record.get("requested"))
        return (f"{what} on {self.target.describe()}, asked at {self.record.get('time')} by "
                f"{self.record.get('user')} (record {self.ident})")


def unfinished(path: Path) -> list[UnfinishedChange]:
    """The intents of the audit log at ``path`` that no outcome with their id follows, in
    order: a change killed before a rotation leaves its intent in a rotated file. No file:
    none. AuditError when a file cannot be read."""
    for _ in range(3):
        try:
            with contextlib.ExitStack() as stack:
                return _read(path, _files(path, stack))
        except FileNotFoundError:  # logrotate renamed or compressed it meanwhile: again
            continue
        except (OSError, EOFError, zlib.error) as error:  # EOFError: a .gz cut short
            raise AuditError(path, f"cannot be read: {getattr(error, 'strerror', None) or error}"
                             ) from None
    raise AuditError(path, "cannot be read: its files kept moving while they were read")


def _read(path: Path, files: list[Path]) -> list[UnfinishedChange]:
    mark_path = path.with_name(f"{path.name}.mark")
    mark = _load(mark_path)
    start, offset, opened = _resume(files, mark) if mark else (0, 0, {})
    for index in range(start, len(files)):
        with _open(files[index]) as stream:
            stream.seek(offset)
            data = stream.read()
        if index < len(files) - 1:
            offset = 0
        else:  # the newest: its last line may be unfinished
            data = data[:data.rfind(b"\n") + 1]
            offset += len(data)
        for line in data.splitlines():
            _take(line, opened)
    if offset:
        with _open(files[-1]) as stream:
            now = Mark(offset=offset, tail=_tail(stream, offset), open=opened)
        if now != mark:
            with contextlib.suppress(OSError):  # then the next reader reads more
                replace_file(mark_path, now.model_dump_json().encode(), 0o640)
    return [UnfinishedChange(json.loads(intent)) for intent in opened.values()]


def _resume(files: list[Path], mark: Mark) -> tuple[int, int, dict[str, str]]:
    """Where ``mark`` says the last reader stopped: the file, the offset and the intents
    open there, looked for from the newest file on; the log's start when it is nowhere."""
    for index in reversed(range(len(files))):
        with _open(files[index]) as stream:
            if _tail(stream, mark.offset) == mark.tail:
                return index, mark.offset, dict(mark.open)
    return 0, 0, {}


def _take(line: bytes, opened: dict[str, str]) -> None:
    try:
        record = _Event.model_validate_json(line)
    except ValidationError:  # a torn line, or no JSON object: no record
        return
    if record.event == "intent" and record.id:
        opened[str(record.id)] = line.decode()
    elif record.event == "outcome":
        opened.pop(str(record.id), None)


def _files(path: Path, stack: contextlib.ExitStack) -> list[Path]:
    """The log's files, oldest first. The audit file is opened first (and judged as the
    writer judges it) and read through its descriptor, so that a rotation before the rotated
    files are listed shows it twice, once skipped, never not at all; a .gz still being
    written beside its plain file is left for the plain file."""
    try:
        fd = os.open(path, _OPEN)
    except FileNotFoundError:
        fd = None
    if fd is not None:
        stack.callback(os.close, fd)
        info = os.fstat(fd)
        problem = distrusted(info)
        if problem is not None:
            raise AuditError(path, problem)
    rotated: dict[int, Path] = {}
    for candidate in path.parent.glob(f"{glob.escape(path.name)}-*"):
        found = _ROTATED.fullmatch(candidate.name[len(path.name):])
        seen = candidate.lstat()
        if found is None or distrusted(seen) is not None or (
                fd is not None and (seen.st_dev, seen.st_ino) == (info.st_dev, info.st_ino)):
            continue  # not a rotated file, or the audit file renamed since it was opened
        held = rotated.get(epoch := int(found.group(1)))
        if held is None or held.suffix == ".gz":
            rotated[epoch] = candidate
    current = [] if fd is None else [Path(f"/proc/self/fd/{fd}")]  # the file it opened
    return [rotated[epoch] for epoch in sorted(rotated)] + current


def _open(path: Path) -> BinaryIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def _tail(stream: BinaryIO, offset: int) -> str:
    """The fingerprint of a place in a file: the up to _TAIL bytes before it."""
    start = max(0, offset - _TAIL)
    stream.seek(start)
    return hashlib.sha256(stream.read(offset - start)).hexdigest()


def _load(path: Path) -> Mark | None:
    """The mark at ``path``, or None: absent, unreadable, or another user's to write."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if distrust(os.fstat(fd), kind="file", owners=(os.geteuid(),)) is not None:
                return None
            return Mark.model_validate_json(handle.read(1 << 20))
        except (OSError, ValidationError):
            return None
