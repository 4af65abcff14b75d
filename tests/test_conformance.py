"""Every ../shared/captures/expected/*.json against the parse of its real capture, and the
drive lists some of them carry against the metrics of that parse."""

from __future__ import annotations

import json

import pytest

from smartarray_agent.collectors.base import CollectorResult
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.exporter.render import MetricSettings, render

from .captures import REAL, expected_files, needs_captures
from .entries import ssacli_entries

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


def _metric_lines(snapshot) -> list[str]:
    result = CollectorResult("ssacli", True, 1.0, 1_700_000_000.0, snapshot)
    text = render(ssacli_entries(result), now=1_700_000_001.0,
                  settings=MetricSettings(None)).decode()
    return text.splitlines()


def _sample(lines: list[str], name: str, **labels: str) -> float | None:
    """The value of the one series of ``name`` whose labels include ``labels``."""
    found = [float(line.rsplit(" ", 1)[1]) for line in lines
             if line.startswith(name + "{")
             and all(f'{k}="{v}"' in line for k, v in labels.items())]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


@needs_captures
@pytest.mark.parametrize(
    "expected_path",
    [p for p in expected_files()
     if any(DRIVE_LISTS[0][0] in c or DRIVE_LISTS[1][0] in c
            for c in json.loads(p.read_text())["controllers"])],
    ids=lambda p: p.stem,
)
def test_the_metrics_of_a_capture_say_what_its_expected_drive_lists_say(expected_path):
    """The drive state, progress and wear of each expected file, as metric series: the state
    is a known one (never "other"), the percentages are ratios, negative wear kept."""
    expected = json.loads(expected_path.read_text())
    lines = _metric_lines(parse((REAL / expected["file"]).read_bytes()))
    for want in expected["controllers"]:
        slot = want["slot"]
        for drive in want.get("logical_drives", []):
            d = {"controller": slot, "logical_drive": drive["number"]}
            assert _sample(lines, "smartarray_logical_drive_status",
                           state=drive["status"], **d) == 1.0, drive
            progress = drive["progress_percent"]
            assert _sample(lines, "smartarray_logical_drive_progress_ratio", **d) == (
                None if progress is None else pytest.approx(progress / 100))
        for drive in want.get("physical_drives", []):
            d = {"controller": slot, "drive": drive["id"]}
            assert _sample(lines, "smartarray_physical_drive_status",
                           state=drive["status"], **d) == 1.0, drive
            usage, hours = drive["usage_remaining_percent"], drive["power_on_hours"]
            assert _sample(lines, "smartarray_physical_drive_usage_remaining_ratio", **d) == (
                None if usage is None else pytest.approx(usage / 100))
            assert _sample(lines, "smartarray_physical_drive_power_on_seconds", **d) == (
                None if hours is None else hours * 3600.0)
