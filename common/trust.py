"""May this path be trusted? The one check for every file the agent acts on that someone
else could have put there (docs/layout.md lists them; docs/privileges.md the rule), from a
``stat`` result (:func:`distrust`) or for a path and every directory above it
(:func:`distrusted_entry`); :meth:`Distrust.describe` words what is wrong."""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH
ANY_ACCESS_BY_OTHERS = 0o077


@dataclass(frozen=True)
class Distrust:
    """Why a path is not trusted: ``link`` (a symbolic link), ``type`` (not the ``kind`` asked
    for), ``owner`` (not one of the ``owners`` asked for) or ``mode`` (a forbidden bit is set)."""

    what: Literal["link", "type", "owner", "mode"]
    uid: int
    gid: int
    mode: int  # the permission bits, as chmod shows them
    owners: tuple[int, ...]
    kind: Literal["file", "directory"] | None

    def describe(self, entry: object) -> str:
        """What is wrong, worded once for every caller: ``/x belongs to uid 5, not root``."""
        if self.what == "owner":
            allowed = " or ".join(dict.fromkeys("root" if uid == 0 else f"uid {uid}"
                                                for uid in self.owners))
            return f"{entry} belongs to uid {self.uid}, not {allowed}"
        if self.what == "mode":
            writers = "everyone" if self.mode & stat.S_IWOTH else f"group {self.gid}"
            return f"{entry} is writable by {writers} (mode {self.mode:04o})"
        if self.what == "link":
            return f"{entry} is a symbolic link"
        return f"{entry} is not a {'directory' if self.kind == 'directory' else 'regular file'}"


def distrust(info: os.stat_result, *, kind: Literal["file", "directory"] | None,
             owners: Collection[int], forbidden: int = WRITABLE_BY_OTHERS,
             trusted_gid: int | None = None, sticky_ok: bool = False) -> Distrust | None:
    """What is wrong with the path ``info`` describes, or None when it may be trusted.

    ``kind``: a regular file, a directory, or None for either. ``owners``: the uids that may
    own it. ``forbidden``: permission bits it must not have. ``trusted_gid``: a group whose
    members may write it (root's group, for configuration). ``sticky_ok``: a sticky directory
    (like /tmp) may be writable by others."""
    mode = stat.S_IMODE(info.st_mode)

    def found(what: Literal["link", "type", "owner", "mode"]) -> Distrust:
        return Distrust(what, info.st_uid, info.st_gid, mode, tuple(owners), kind)

    if stat.S_ISLNK(info.st_mode):
        return found("link")
    if (kind == "file" and not stat.S_ISREG(info.st_mode)) or (
            kind == "directory" and not stat.S_ISDIR(info.st_mode)):
        return found("type")
    if info.st_uid not in owners:
        return found("owner")
    bits = mode & forbidden
    if trusted_gid is not None and info.st_gid == trusted_gid:
        bits &= ~stat.S_IWGRP
    if sticky_ok and stat.S_ISDIR(info.st_mode) and mode & stat.S_ISVTX:
        bits &= ~WRITABLE_BY_OTHERS
    return found("mode") if bits else None


def distrusted_entry(path: Path, *, owners: Collection[int], trusted_gid: int | None = None,
                     opened: os.stat_result | None = None, sticky_ok: bool = False
                     ) -> tuple[Path, Distrust] | None:
    """The first of ``path`` and the directories above it, as written and as resolved
    through symbolic links, that someone other than ``owners`` (and the members of
    ``trusted_gid``) could have changed, with what is wrong; None when there is none.

    ``opened``: the stat of the descriptor actually read, for the resolved ``path``. A link
    on the way is not refused: its target is checked as part of the resolved path. An entry
    still to be made is skipped: its directory is what counts. ``path``'s own directory may
    not be writable by others even if sticky (anyone could plant a file or a link there);
    a directory higher up may if it is sticky, like /tmp. OSError (its ``filename`` the
    entry) when an entry cannot be checked. ``sticky_ok``: ``path``'s own directory may be
    sticky too (where only a directory is to be made, and then checked as one's own)."""
    path = Path(os.path.abspath(path))
    resolved = path.resolve()
    checked: set[tuple[Path, bool]] = set()  # an entry, and whether as the own directory
    for target in (path, resolved):
        for entry in (target, *target.parents):
            own_directory = entry == target.parent and not sticky_ok
            if (entry, own_directory) in checked or (entry, True) in checked:
                continue
            checked.add((entry, own_directory))
            try:
                info = opened if entry == resolved and opened else os.lstat(entry)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            found = distrust(info, kind=None, owners=owners, trusted_gid=trusted_gid,
                             sticky_ok=not own_directory)
            if found is not None:
                return entry, found
    return None
