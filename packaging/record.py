"""Rewrite the RECORD of every distribution in a staged site-packages so that it lists the files as
they are packaged: stage.sh changes some after pip installed them (the console scripts' #! line,
the blanked #! of library modules, the stripped shared objects) and removes others (the
dependencies' commands, direct_url.json, PyYAML's C extension), and it byte-compiles them.

    python -I packaging/record.py SITE_PACKAGES

Each listed file that is gone is dropped; each that is left gets its sha256 and size again; the
byte-compiled module of each listed source follows it, hashed too (the .pyc files are
unchecked-hash, so their bytes do not depend on the build). RECORD itself stays listed without a
hash, as the wheel specification has it. Run it with the interpreter the package runs on, whose
cache tag names the .pyc files.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import sys
from importlib.util import cache_from_source
from pathlib import Path


def _row(site: Path, name: str) -> list[str]:
    data = (site / name).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def rewrite(record: Path, site: Path) -> None:
    own = record.relative_to(site).as_posix()
    rows: list[list[str]] = []
    with record.open(newline="", encoding="utf-8") as f:
        listed = [row[0] for row in csv.reader(f) if row]
    for name in listed:
        path = Path(os.path.normpath(site / name))
        if name == own or path.suffix == ".pyc" or not path.is_file():
            continue  # RECORD goes last; the .pyc files follow their sources
        rows.append(_row(site, name))
        if path.suffix == ".py":
            compiled = Path(cache_from_source(str(path)))
            if compiled.is_file():
                rows.append(_row(site, os.path.relpath(compiled, site)))
    rows.append([own, "", ""])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    record.write_text(out.getvalue(), encoding="utf-8")


def main() -> None:
    site = Path(sys.argv[1]).resolve()
    records = sorted(site.glob("*.dist-info/RECORD"))
    if not records:
        sys.exit(f"record.py: no */RECORD in {site}")
    for record in records:
        rewrite(record, site)


if __name__ == "__main__":
    main()
