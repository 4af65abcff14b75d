"""Take directory entries out of a .deb's data archive, so that dpkg unpacks into those
directories without owning them.

    python3 -I packaging/unown.py DEB ./opt/ [...]

dpkg removes an empty directory when the last package that owns it goes. Debian 12 gives
``/opt`` to no package, so a package that ships ``./opt/`` took ``/opt`` away when it was
purged from a host with nothing else there. dpkg-deb archives every directory of the tree it
builds from; this rewrites the archive it made: the data member without those entries (GNU
tar's ``--delete``, every other member byte for byte), compressed again with xz, and every ar
header as dpkg-deb wrote it but the data member's size. The package's preinst makes such a
directory where a host lacks it, since dpkg unpacks only into one that exists.
"""

from __future__ import annotations

import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

AR_MAGIC = b"!<arch>\n"
HEADER = 60  # name 16, mtime 12, uid 6, gid 6, mode 8, size 10, "`\n"
DATA = b"data.tar.xz"


def members(archive: bytes) -> list[tuple[bytes, bytes]]:
    """Each member of an ar archive: its header and its data."""
    assert archive.startswith(AR_MAGIC), "not an ar archive"
    found, at = [], len(AR_MAGIC)
    while at < len(archive):
        header = archive[at:at + HEADER]
        size = int(header[48:58])
        found.append((header, archive[at + HEADER:at + HEADER + size]))
        at += HEADER + size + size % 2
    return found


def without(data_tar_xz: bytes, entries: list[str]) -> bytes:
    """The xz-compressed tar ``data_tar_xz`` without ``entries`` (their contents kept)."""
    with tempfile.NamedTemporaryFile(suffix=".tar") as tar:
        tar.write(lzma.decompress(data_tar_xz))
        tar.flush()
        subprocess.run(["tar", "--delete", "--no-recursion", "-f", tar.name, *entries],
                       check=True)
        return lzma.compress(Path(tar.name).read_bytes(), preset=6)


def unown(deb: Path, entries: list[str]) -> None:
    out = bytearray(AR_MAGIC)
    for header, data in members(deb.read_bytes()):
        if header[:16].rstrip(b" /") == DATA:
            data = without(data, entries)
            header = header[:48] + str(len(data)).encode().ljust(10) + header[58:]
        out += header + data + (b"\n" if len(data) % 2 else b"")
    deb.write_bytes(bytes(out))


if __name__ == "__main__":
    unown(Path(sys.argv[1]), sys.argv[2:])
