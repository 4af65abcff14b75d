"""smartarray_agent.common.trust: the one answer to "may this path be trusted" that the lock, the
credentials file, the configuration walk and the simulator's state directory share. Real
files, links and directories; the owner is varied through ``owners`` so no root is needed."""

from __future__ import annotations

import os

import pytest

from smartarray_agent.common.trust import ANY_ACCESS_BY_OTHERS, Distrust, distrust, distrusted_entry

ME = os.geteuid()


def made(tmp_path, mode: int, *, directory: bool = False):
    path = tmp_path / ("dir" if directory else "file")
    if directory:
        path.mkdir()
    else:
        path.write_text("x")
    path.chmod(mode)
    return os.lstat(path)


def test_a_private_file_of_an_allowed_owner_is_trusted(tmp_path):
    assert distrust(made(tmp_path, 0o600), kind="file", owners=(0, ME),
                    forbidden=ANY_ACCESS_BY_OTHERS) is None


def test_a_link_is_never_trusted_whatever_it_points_to(tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    found = distrust(os.lstat(tmp_path / "link"), kind=None, owners=(0, ME))
    assert found is not None and found.what == "link"


@pytest.mark.parametrize(("kind", "directory", "words"), [
    ("file", True, "x is not a regular file"), ("directory", False, "x is not a directory")])
def test_the_wrong_type_is_refused(tmp_path, kind, directory, words):
    found = distrust(made(tmp_path, 0o700, directory=directory), kind=kind, owners=(ME,))
    assert found is not None and (found.what, found.describe("x")) == ("type", words)


def test_another_owner_is_refused_and_named(tmp_path):
    found = distrust(made(tmp_path, 0o600), kind="file", owners=(ME + 1, ME + 2))
    assert found == Distrust("owner", ME, os.getegid(), 0o600, (ME + 1, ME + 2), "file")
    assert found.describe("x") == f"x belongs to uid {ME}, not uid {ME + 1} or uid {ME + 2}"


@pytest.mark.parametrize(("mode", "forbidden", "writers"), [
    (0o602, None, "everyone"),
    (0o620, None, f"group {os.getegid()}"),
    (0o640, ANY_ACCESS_BY_OTHERS, f"group {os.getegid()}"),
])
def test_a_forbidden_bit_is_refused_with_who_may_write(tmp_path, mode, forbidden, writers):
    extra = {} if forbidden is None else {"forbidden": forbidden}
    found = distrust(made(tmp_path, mode), kind="file", owners=(ME,), **extra)
    assert found is not None and (found.what, found.describe("x")) == (
        "mode", f"x is writable by {writers} (mode {mode:04o})")


def test_only_the_trusted_group_may_write(tmp_path):
    info = made(tmp_path, 0o664)
    assert distrust(info, kind="file", owners=(ME,), trusted_gid=info.st_gid) is None
    assert distrust(info, kind="file", owners=(ME,), trusted_gid=info.st_gid + 1) is not None
    os.chmod(tmp_path / "file", 0o666)
    found = distrust(os.lstat(tmp_path / "file"), kind="file", owners=(ME,),
                     trusted_gid=info.st_gid)
    assert found is not None and "writable by everyone" in found.describe("x")  # others may not


def test_a_sticky_directory_may_be_open_to_all_only_when_allowed(tmp_path):
    info = made(tmp_path, 0o1777, directory=True)
    assert distrust(info, kind="directory", owners=(ME,), sticky_ok=True) is None
    assert distrust(info, kind="directory", owners=(ME,)).what == "mode"
    plain = os.lstat(tmp_path)
    os.chmod(tmp_path, 0o777)
    try:
        assert distrust(os.lstat(tmp_path), kind="directory", owners=(ME,),
                        sticky_ok=True).what == "mode"
    finally:
        os.chmod(tmp_path, plain.st_mode & 0o7777)


@pytest.mark.skipif(ME != 0, reason="the walk passes root's /tmp, which the owners given here "
                    "hold only when root runs the test")
def test_a_path_is_judged_with_every_directory_above_it(tmp_path):
    """The walk the configuration and the simulator's state directory share: the first entry
    an owner not allowed could have changed is named; a sticky directory is trusted above a
    file's own directory, not as it (anyone could plant a file there)."""
    sticky = tmp_path / "sticky"
    own = sticky / "own"
    own.mkdir(parents=True)
    sticky.chmod(0o1777)
    assert distrusted_entry(own / "state.json", owners=(ME,)) is None
    assert distrusted_entry(own / "state.json", owners=(ME + 1,)) == (
        own, Distrust("owner", ME, os.getegid(), 0o755 & ~_umask(), (ME + 1,), None))
    found = distrusted_entry(sticky / "state.json", owners=(ME,))
    assert found is not None and found[0] == sticky and found[1].what == "mode"
    (own / "link").symlink_to(sticky)  # a link is judged by where it leads
    found = distrusted_entry(own / "link" / "state.json", owners=(ME,))
    assert found is not None and found[0] == sticky and found[1].what == "mode"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
