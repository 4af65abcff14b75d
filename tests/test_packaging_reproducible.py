"""Reproducible packages: two builds of the .deb, and of the .rpm, from the same checkout are
byte-identical, although the second runs in another time zone, locale and umask, stages under
other temporary directories and gets its SOURCE_DATE_EPOCH another way (from the environment
instead of the last commit's time, the default). Every file in them carries that time.

On a mismatch the failure says what differs, so that it can be fixed without diffoscope: for the
.deb, the ar members' headers and contents, then in the control and data archives each member
whose content (sha256) differs, with a diff of a small text file, and for type, mode, owner,
mtime, link and place in the archive how many members differ and a few of them; for the .rpm,
the same of its files (``rpm -qp --dump``) and each header tag that differs (``rpm -qp --xml``).

Marked ``packages`` like tests/test_packaging_build.py: each build takes about a minute."""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import socket
import subprocess
import tarfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from .run_once import build_once
from .test_packaging_build import build_package, needs_deb_tools, needs_rpmbuild

ROOT = Path(__file__).resolve().parent.parent
MAX_DIFF_LINES = 60

pytestmark = pytest.mark.packages


def commit_time() -> int:
    out = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
                         capture_output=True, text=True, check=True).stdout
    return int(out)


# The package tests/test_packaging_build.py reads (built once in the test run, in the test's
# environment: TZ unset or UTC, the locale given, umask 022, SOURCE_DATE_EPOCH left to its
# default), and a second build in an environment that differs in everything a build should
# not depend on: time zone, locale, umask, and SOURCE_DATE_EPOCH given.
OTHER_ENVIRONMENT = {"TZ": "Pacific/Chatham", "LC_ALL": "C"}
OTHER_UMASK = 0o002


def _two_builds(name: str, script: str, factory) -> tuple[Path, Path]:
    first = build_once(factory, name, lambda out: build_package(script, out))
    env = {k: v for k, v in os.environ.items() if k not in ("SOURCE_DATE_EPOCH", "LANG")}
    env.update(OTHER_ENVIRONMENT, SOURCE_DATE_EPOCH=str(commit_time()))
    out = factory.mktemp(f"{name}-again")
    result = subprocess.run([str(ROOT / "packaging" / script), str(out)], capture_output=True,
                            text=True, timeout=1800, env=env, umask=OTHER_UMASK)
    assert result.returncode == 0, result.stdout + result.stderr
    second = Path(result.stdout.strip().splitlines()[-1])
    assert second.parent == out and second.name == first.name
    return first, second


@pytest.fixture(scope="module")
def debs(tmp_path_factory) -> tuple[Path, Path]:
    return _two_builds("deb", "build-deb.sh", tmp_path_factory)


@pytest.fixture(scope="module")
def rpms(tmp_path_factory) -> tuple[Path, Path]:
    return _two_builds("rpm", "build-rpm.sh", tmp_path_factory)


# --- what differs, for the failure message --------------------------------------------------

def _limited(lines: list[str]) -> list[str]:
    if len(lines) > MAX_DIFF_LINES:
        return [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return lines


def _diff(a: list[str], b: list[str], name: str) -> list[str]:
    return _limited(list(difflib.unified_diff(a, b, f"first/{name}", f"second/{name}",
                                              lineterm="", n=1)))


def ar_members(data: bytes) -> list[tuple[str, str, bytes]]:
    """(name, header fields, content) of each member of an ar archive (a .deb)."""
    assert data.startswith(b"!<arch>\n")
    members, offset = [], 8
    while offset < len(data):
        header = data[offset:offset + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58])
        fields = " ".join(header[16:58].decode().split())  # mtime uid gid mode size
        members.append((name, fields, data[offset + 60:offset + 60 + size]))
        offset += 60 + size + size % 2
    return members


FIELDS = ("type", "mode", "owner", "mtime", "size", "link", "sha256")


def tar_members(data: bytes) -> dict[str, tuple[dict[str, str], bytes]]:
    """Each member of a tar archive: what `tar --full-time -tv` lists of it, its place in the
    archive and the sha256 of its content; and the content."""
    members = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for index, member in enumerate(tar.getmembers()):
            content = tar.extractfile(member).read() if member.isfile() else b""
            fields = {"index": str(index), "type": member.type.decode(),
                      "mode": f"{member.mode:04o}",
                      "owner": f"{member.uname or member.uid}/{member.gname or member.gid}",
                      "mtime": str(member.mtime), "size": str(member.size),
                      "link": member.linkname, "sha256": hashlib.sha256(content).hexdigest()}
            members[member.name] = (fields, content)
    return members


def _text(content: bytes) -> list[str] | None:
    if len(content) > 256 * 1024 or b"\0" in content:
        return None
    try:
        return content.decode().splitlines()
    except UnicodeDecodeError:
        return None


def compare_entries(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]], label: str,
                    contents: tuple[dict[str, bytes], dict[str, bytes]] | None = None
                    ) -> list[str]:
    """What differs between two listings of the same files, field by field: every file whose
    content differs (with a diff of a small text file), and for the other fields how many
    files differ and a few of them."""
    report = [f"{label}: only in the first: {name}" for name in sorted(a.keys() - b.keys())]
    report += [f"{label}: only in the second: {name}" for name in sorted(b.keys() - a.keys())]
    common = sorted(a.keys() & b.keys())
    for name in common:
        if a[name].get("sha256") == b[name].get("sha256"):
            continue
        report.append(f"{label}: content of {name} differs "
                      f"(size {a[name].get('size')} and {b[name].get('size')})")
        if contents is not None:
            text_a, text_b = _text(contents[0][name]), _text(contents[1][name])
            if text_a is not None and text_b is not None:
                report += ["    " + line for line in _diff(text_a, text_b, name)]
    for field in (f for f in (*FIELDS, "index") if f not in ("sha256", "size")):
        differing = [name for name in common if a[name].get(field) != b[name].get(field)]
        if differing:
            examples = ", ".join(f"{name} ({a[name].get(field)} and {b[name].get(field)})"
                                 for name in differing[:3])
            report.append(f"{label}: {field} differs in {len(differing)} of {len(common)} "
                          f"entries, e.g. {examples}")
    return report


def compare_tars(first: bytes, second: bytes, label: str) -> list[str]:
    a, b = tar_members(first), tar_members(second)
    return compare_entries({k: v[0] for k, v in a.items()}, {k: v[0] for k, v in b.items()},
                           label, ({k: v[1] for k, v in a.items()},
                                   {k: v[1] for k, v in b.items()}))


def deb_differences(first: Path, second: Path) -> list[str]:
    members_a, members_b = ar_members(first.read_bytes()), ar_members(second.read_bytes())
    report = []
    if [m[0] for m in members_a] != [m[0] for m in members_b]:
        report.append(f"ar members: {[m[0] for m in members_a]} != {[m[0] for m in members_b]}")
    for (name, fields_a, data_a), (_, fields_b, data_b) in zip(members_a, members_b,
                                                               strict=False):
        if fields_a != fields_b:
            report.append(f"ar member {name}: header (mtime uid gid mode size) {fields_a!r} "
                          f"and {fields_b!r}")
        if data_a != data_b:
            report.append(f"ar member {name}: content differs")
    for option, label in (("--ctrl-tarfile", "control.tar"), ("--fsys-tarfile", "data.tar")):
        tars = [subprocess.run(["dpkg-deb", option, str(deb)], capture_output=True,
                               check=True).stdout for deb in (first, second)]
        report += compare_tars(*tars, label)
    return report


def rpm_dump(rpm: Path) -> dict[str, dict[str, str]]:
    """``rpm -qp --dump``: path size mtime digest mode owner group isconfig isdoc rdev link."""
    entries = {}
    lines = subprocess.run(["rpm", "-qp", "--dump", str(rpm)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    for line in lines:
        path, size, mtime, digest, mode, owner, group, _, _, _, link = line.rsplit(" ", 10)
        entries[path] = {"type": mode[:-4], "mode": mode[-4:], "owner": f"{owner}/{group}",
                         "mtime": mtime, "size": size, "link": link, "sha256": digest}
    return entries


def rpm_header(rpm: Path) -> dict[str, list[str]]:
    """Every tag of the header (``rpm -qp --xml``) and its values."""
    xml = subprocess.run(["rpm", "-qp", "--xml", str(rpm)], capture_output=True, text=True,
                         check=True).stdout
    return {tag.get("name"): [(value.text or "").strip() for value in tag]
            for tag in ElementTree.fromstring(xml).iter("rpmTag")}


def rpm_differences(first: Path, second: Path) -> list[str]:
    report = compare_entries(rpm_dump(first), rpm_dump(second), "files (rpm -qp --dump)")
    a, b = rpm_header(first), rpm_header(second)
    for tag in sorted(a.keys() | b.keys()):
        values_a, values_b = a.get(tag, []), b.get(tag, [])
        if values_a == values_b:
            continue
        if len(values_a) <= 3 and len(values_b) <= 3:
            report.append(f"header tag {tag}: {values_a} and {values_b}")
        else:
            count = sum(x != y for x, y in zip(values_a, values_b, strict=False))
            report.append(f"header tag {tag}: {count} of {len(values_a)} values differ "
                          f"({len(values_b)} in the second)")
    if not report:
        data_a, data_b = first.read_bytes(), second.read_bytes()
        offset = next((i for i, (x, y) in enumerate(zip(data_a, data_b, strict=False))
                       if x != y), min(len(data_a), len(data_b)))
        report.append(f"same header and files; the bytes differ from offset {offset} "
                      f"(sizes {len(data_a)}, {len(data_b)})")
    return report


def assert_identical(pair: tuple[Path, Path], differences) -> None:
    first, second = pair
    if first.read_bytes() == second.read_bytes():
        return
    pytest.fail(f"two builds of {first.name} differ:\n" + "\n".join(differences(first, second)),
                pytrace=False)


# --- the tests --------------------------------------------------------------------------------

@needs_deb_tools
def test_two_deb_builds_are_identical(debs):
    assert_identical(debs, deb_differences)


@needs_deb_tools
def test_every_deb_member_carries_the_last_commits_time(debs):
    epoch = commit_time()
    deb = debs[0]
    for name, fields, _ in ar_members(deb.read_bytes()):
        assert int(fields.split()[0]) == epoch, (name, fields)
    for option in ("--ctrl-tarfile", "--fsys-tarfile"):
        tar = subprocess.run(["dpkg-deb", option, str(deb)], capture_output=True,
                             check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            late = [(m.name, m.mtime) for m in archive.getmembers() if m.mtime != epoch]
        assert not late, late[:20]


@needs_rpmbuild
def test_two_rpm_builds_are_identical(rpms):
    assert_identical(rpms, rpm_differences)


@needs_rpmbuild
def test_every_rpm_file_and_its_build_time_are_the_last_commits_time(rpms):
    epoch = str(commit_time())
    rpm = rpms[0]
    build = subprocess.run(["rpm", "-qp", "--qf", "%{BUILDTIME} %{BUILDHOST}", str(rpm)],
                           capture_output=True, text=True, check=True).stdout.split()
    assert build[0] == epoch, build
    assert build[1] != socket.gethostname(), "the build host names the building machine"
    dump = subprocess.run(["rpm", "-qp", "--dump", str(rpm)], capture_output=True, text=True,
                          check=True).stdout.splitlines()
    late = [line for line in dump if line.split()[2] != epoch]
    assert not late, late[:20]
