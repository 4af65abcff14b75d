"""Every ../shared/captures/expected/*.json against the parse of its real capture."""

from __future__ import annotations

import json

import pytest

from smartarray_agent.collectors.ssacli.parser import parse

from .captures import REAL, expected_files, needs_captures

CONTRACT_BLOCKS = ("cache", "backup_power")
CONTRACT_SCALARS = ("slot", "model", "serial", "firmware", "status", "mode")
# the drive lists some expected files carry: (list, the expected file's id key, compared fields)
DRIVE_LISTS = (
    ("logical_drives", "number", ("status", "progress_percent")),
    ("physical_drives", "id", ("status", "usage_remaining_percent", "power_on_hours")),
)


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
    for name, id_key, fields in DRIVE_LISTS:
        if name in expected:
            found += _drive_differences(name, id_key, fields, expected[name], actual[name])
    return found


def _drive_differences(
    name: str, id_key: str, fields: tuple[str, ...], expected: list[dict], actual: list[dict]
) -> list[str]:
    got = {drive["drive_id"]: drive for drive in actual}
    found = []
    # a config detail lists drives in parity/mirror group order first: compare as sets
    if sorted(d[id_key] for d in expected) != sorted(got):
        found.append(f"{name}: expected {sorted(d[id_key] for d in expected)}, "
                     f"got {sorted(got)}")
    for want in expected:
        drive = got.get(want[id_key], {})
        for key in fields:
            if want[key] != drive.get(key):
                found.append(f"{name} {want[id_key]}.{key}: expected {want[key]!r}, "
                             f"got {drive.get(key)!r}")
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
