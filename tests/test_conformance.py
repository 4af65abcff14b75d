"""Every ../shared/captures/expected/*.json against the parse of its real capture."""

from __future__ import annotations

import json

import pytest

from smartarray_agent.collectors.ssacli.parser import parse

from .captures import REAL, expected_files, needs_captures

CONTRACT_BLOCKS = ("cache", "backup_power")
CONTRACT_SCALARS = ("slot", "model", "serial", "firmware", "status", "mode")


def _actual(controller) -> dict:
    data = controller.model_dump()
    data["logical_drive_count"] = len(controller.logical_drives)
    data["physical_drive_count"] = len(controller.physical_drives)
    return data


def _differences(expected: dict, actual: dict) -> list[str]:
    found = []
    for key in CONTRACT_SCALARS:
        if expected[key] != actual[key]:
            found.append(f"{key}: expected {expected[key]!r}, got {actual[key]!r}")
    for block in CONTRACT_BLOCKS:
        for key, want in expected[block].items():
            got = actual[block][key]
            if want != got:
                found.append(f"{block}.{key}: expected {want!r}, got {got!r}")
    for key in ("logical_drive_count", "physical_drive_count"):
        # the expected files say a count of 0 and null mean the same
        if (expected[key] or 0) != actual[key]:
            found.append(f"{key}: expected {expected[key]!r}, got {actual[key]!r}")
    return found


@needs_captures
@pytest.mark.parametrize("expected_path", expected_files(), ids=lambda p: p.stem)
def test_capture_matches_expected(expected_path):
    expected = json.loads(expected_path.read_text())
    snapshot = parse((REAL / expected["file"]).read_bytes())

    assert (snapshot.error.message if snapshot.error else None) == expected["error"]
    assert len(snapshot.controllers) == len(expected["controllers"])
    problems = []
    for index, (want, got) in enumerate(
        zip(expected["controllers"], snapshot.controllers, strict=True)
    ):
        problems += [f"controller {index}: {p}" for p in _differences(want, _actual(got))]
    assert not problems, "\n".join(problems)


@needs_captures
def test_every_expected_file_names_an_existing_capture():
    files = expected_files()
    assert len(files) >= 60
    missing = [p.name for p in files if not (REAL / json.loads(p.read_text())["file"]).is_file()]
    assert not missing
