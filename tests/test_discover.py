"""Finding the vendor CLI: preference order, the vendor directories, an override."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.ssacli import discover
from smartarray_agent.collectors.ssacli.discover import CliNotFound, find_cli


def _program(directory, name):
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_prefers_ssacli_then_hpssacli_then_hpacucli(tmp_path, monkeypatch):
    monkeypatch.setattr(discover, "VENDOR_DIRS", ())
    _program(tmp_path, "hpacucli")
    assert find_cli(path=str(tmp_path)).name == "hpacucli"
    _program(tmp_path, "hpssacli")
    assert find_cli(path=str(tmp_path)).name == "hpssacli"
    ssacli = _program(tmp_path, "ssacli")
    assert find_cli(path=str(tmp_path)).argv == (str(ssacli),)


def test_finds_it_in_a_vendor_directory_off_path(tmp_path, monkeypatch):
    vendor = tmp_path / "opt-smartstorageadmin"
    vendor.mkdir()
    monkeypatch.setattr(discover, "VENDOR_DIRS", (str(vendor),))
    ssacli = _program(vendor, "ssacli")
    assert find_cli(path=str(tmp_path / "empty")).argv == (str(ssacli),)


def test_none_installed_names_what_was_looked_for_and_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(discover, "VENDOR_DIRS", (str(tmp_path),))
    with pytest.raises(CliNotFound) as caught:
        find_cli(path=str(tmp_path))
    message = str(caught.value)
    for name in ("ssacli", "hpssacli", "hpacucli", str(tmp_path), "install"):
        assert name in message


def test_an_override_must_exist(tmp_path):
    with pytest.raises(CliNotFound, match="missing-ssacli"):
        find_cli(str(tmp_path / "missing-ssacli"))
    program = _program(tmp_path, "ssacli-6.40")
    assert find_cli(str(program)).name == "ssacli"
