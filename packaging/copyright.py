"""Write the package's copyright file (Debian's machine-readable format 1.0) from the licence
metadata of every Python distribution installed in the package's virtual environment, so the
file names exactly the libraries the package bundles, at the versions it bundles.

    VENV/bin/python -I packaging/copyright.py SITE_PACKAGES INSTALLED_SITE_PACKAGES > copyright

SITE_PACKAGES is the staged directory read; INSTALLED_SITE_PACKAGES is where it sits on the
target (without the leading slash), used in the Files: patterns. A licence that cannot be named
stops the build: nothing ships with an unknown licence.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib.metadata import Distribution, distributions
from pathlib import Path

PROJECT = "smartarray-agent"
PROJECT_LICENSE = "Apache-2.0"
PROJECT_COPYRIGHT = "smartarray-agent maintainers"
# Licences Debian keeps in /usr/share/common-licenses: referred to, not copied.
COMMON = {"Apache-2.0": "Apache-2.0", "LGPL-2.1-or-later": "LGPL-2.1", "LGPL-2.1": "LGPL-2.1",
          "MPL-2.0": "MPL-2.0", "GPL-2.0-or-later": "GPL-2", "GPL-3.0-or-later": "GPL-3"}
# The SPDX text of a licence that a bundled library names beside another (prometheus_client:
# Apache-2.0 AND BSD-2-Clause, for the decorator module it bundles) while no bundled library
# ships it as its only licence, to copy the text from.
STANDARD_TEXTS = {"BSD-2-Clause": """\
Redistribution and use in source and binary forms, with or without modification, are
permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this list of
conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice, this list of
conditions and the following disclaimer in the documentation and/or other materials
provided with the distribution.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS
OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE
COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)
HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR
TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""}
# Debian's short names for the SPDX ones that differ.
DEBIAN_NAME = {"LGPL-2.1-or-later": "LGPL-2.1+", "GPL-2.0-or-later": "GPL-2+",
               "GPL-3.0-or-later": "GPL-3+"}
# Free-text License: fields and trove classifiers, as SPDX.
ALIASES = {
    "mit": "MIT", "mit license": "MIT", "isc": "ISC", "isc license": "ISC",
    "isc license (iscl)": "ISC", "apache-2.0": "Apache-2.0", "apache 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0", "apache license 2.0": "Apache-2.0",
    "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause",
    "python software foundation license": "PSF-2.0",
}
COPYRIGHT_LINE = re.compile(r"^\s*(?:Copyright|\(c\)|©)\s*(?:\(c\)|©)?\s*\d{4}.*$", re.IGNORECASE)


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    spdx: str  # an SPDX expression: names joined by AND / OR
    copyright: list[str]
    paths: list[str]  # top-level entries in site-packages
    licence_files: list[Path]  # relative to site-packages
    licence_text: str  # the first licence file's text


def field(dist: Distribution, name: str) -> str:
    """A metadata field, stripped; "" when absent."""
    return (dist.metadata[name] or "").strip() if name in dist.metadata else ""


def spdx_of(dist: Distribution) -> str:
    meta = dist.metadata
    if field(dist, "License-Expression"):
        return field(dist, "License-Expression")
    free = field(dist, "License")
    if free.lower() in ALIASES:
        return ALIASES[free.lower()]
    for classifier in meta.get_all("Classifier") or []:
        if classifier.startswith("License :: OSI Approved :: "):
            name = classifier.rsplit(" :: ", 1)[1].lower()
            if name in ALIASES:
                return ALIASES[name]
    raise SystemExit(f"copyright.py: no known licence for {meta['Name']} {dist.version}: "
                     f"License={free[:60]!r}; add it to ALIASES after reading its licence")


def library(dist: Distribution, site: Path) -> Library:
    files = [Path(str(f)) for f in dist.files or []]
    licence_files = [f for f in files
                     if re.search(r"licen[cs]e|copying|notice", f.name, re.IGNORECASE)
                     and (site / f).is_file()]
    texts = [(site / f).read_text(errors="replace") for f in licence_files]
    copyright_lines: list[str] = []
    for text in texts:
        for line in text.splitlines():
            if COPYRIGHT_LINE.match(line) and line.strip() not in copyright_lines:
                copyright_lines.append(line.strip())
    if not copyright_lines:
        author = field(dist, "Author") or field(dist, "Author-email") \
            or field(dist, "Maintainer") or f"the {dist.metadata['Name']} authors"
        copyright_lines = [author]
    tops = sorted({f.parts[0] for f in files
                   if f.parts and f.parts[0] not in ("..", "__pycache__")})
    return Library(dist.metadata["Name"], dist.version, spdx_of(dist), copyright_lines, tops,
                   licence_files, texts[0] if texts else "")


def debian_expression(spdx: str) -> str:
    words = [DEBIAN_NAME.get(w, w) for w in spdx.replace("(", " ").replace(")", " ").split()]
    return " ".join(w.lower() if w in ("AND", "OR") else w for w in words)


def names(spdx: str) -> list[str]:
    return [w for w in spdx.replace("(", " ").replace(")", " ").split() if w not in ("AND", "OR")]


def indent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    return "\n".join(" " + line.rstrip() if line.strip() else " ." for line in lines)


def render(libraries: list[Library], installed: str) -> str:
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {PROJECT}\n"
        "Comment: Generated at build time by packaging/copyright.py from the licence metadata\n"
        " of the Python libraries bundled in /opt/smartarray-agent. Each library's own licence\n"
        " files are installed beside it, in its .dist-info directory.\n",
        f"Files: *\nCopyright: {PROJECT_COPYRIGHT}\nLicense: {PROJECT_LICENSE}\n",
    ]
    texts: dict[str, str] = {}  # from the libraries first, else STANDARD_TEXTS
    for lib in libraries:
        if lib.name == PROJECT:
            continue
        patterns = []
        for top in lib.paths:
            pattern = f"{installed}/{top}"
            patterns.append(pattern + ("/*" if not top.endswith(".py") else ""))
            if top.endswith(".py"):
                patterns.append(f"{installed}/__pycache__/{top[:-3]}.*")
        shipped = " ".join(f"/{installed}/{f}" for f in lib.licence_files)
        out.append(
            "Files: " + "\n       ".join(patterns) + "\n"
            "Copyright: " + "\n           ".join(lib.copyright) + "\n"
            f"License: {debian_expression(lib.spdx)}\n"
            f"Comment: {lib.name} {lib.version}"
            + (f"; licence files: {shipped}" if shipped else "") + "\n"
        )
        if len(names(lib.spdx)) == 1 and lib.licence_text and lib.spdx not in COMMON:
            texts.setdefault(lib.spdx, lib.licence_text)
    used = sorted({PROJECT_LICENSE, *(n for lib in libraries for n in names(lib.spdx))})
    for name in used:
        short = DEBIAN_NAME.get(name, name)
        if name in COMMON:
            out.append(f"License: {short}\n On Debian systems the complete text of this licence is"
                       f" in\n /usr/share/common-licenses/{COMMON[name]}.\n")
        elif name in texts or name in STANDARD_TEXTS:
            out.append(f"License: {short}\n{indent(texts.get(name) or STANDARD_TEXTS[name])}\n")
        else:
            raise SystemExit(f"copyright.py: no text for {name}: no bundled library ships it alone")
    return "\n".join(out)


def main() -> None:
    site, installed = Path(sys.argv[1]), sys.argv[2].strip("/")
    libraries = sorted((library(d, site) for d in distributions(path=[str(site)])),
                       key=lambda lib: lib.name.lower())
    sys.stdout.write(render(libraries, installed))


if __name__ == "__main__":
    main()
