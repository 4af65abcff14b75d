"""The status model: no unknown attribute, every value of its declared type, and JSON that
reads back into the same snapshot."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.common.model import INT64_MAX, Cache, PhysicalDrive, Snapshot, to_json

from .captures import needs_captures, real_files
from .model_reader import read_snapshot


def test_a_misspelt_attribute_is_refused():
    cache = Cache()
    with pytest.raises(ValueError, match="no field"):
        cache.read_precent = 25  # type: ignore[attr-defined]


def test_a_whole_number_out_of_range_is_unknown():
    """No controller has it and no metric could carry it (issue #39 item 3): None, as a line
    not printed; the edges of each range are values."""
    drive = PhysicalDrive(drive_id="1I:1:1", size_bytes=10**400, power_on_hours=-1,
                          estimated_life_remaining_days=INT64_MAX + 1)
    assert (drive.size_bytes, drive.power_on_hours, drive.estimated_life_remaining_days) == (
        None, None, None)
    cache = Cache(size_bytes=INT64_MAX, read_percent=101, write_percent=0)
    assert (cache.size_bytes, cache.read_percent, cache.write_percent) == (INT64_MAX, None, 0)
    assert Cache.model_validate_json('{"size_bytes": 1%s}' % ("0" * 400)).size_bytes is None


def test_a_size_too_large_for_a_float_is_parsed_as_unknown():
    """A 400-digit size in the CLI's output is not a size any controller has: unknown, as
    the model makes any size past INT64_MAX, never a traceback."""
    huge = "9" * 400
    snapshot = parse(f"""
Smart Array P420i in Slot 0 (Embedded)
   Slot: 0
   Total Cache Size: {huge} GB
   Cache Ratio: 25% Read / 75% Write

   physicaldrive 1I:1:1
      Port: 1I
      Box: 1
      Bay: 1
      Status: OK
      Size: {huge} GB
""")
    controller = snapshot.controllers[0]
    assert controller.cache.size_bytes is None
    assert controller.cache.read_percent == 25
    assert [drive.size_bytes for drive in controller.physical_drives] == [None]


@needs_captures
@pytest.mark.parametrize("path", real_files(), ids=lambda path: path.name)
def test_every_value_parsed_from_a_capture_has_its_declared_type(path):
    try:
        snapshot = parse(path.read_text(errors="replace"))
    except ParseError:
        pytest.skip("not CLI output: the parser refuses it")
    # read_snapshot refuses a value of another type (an int in a float field included)
    assert read_snapshot(to_json(snapshot)) == snapshot


def test_a_number_is_written_as_its_declared_type():
    snapshot = read_snapshot('{"controllers": [{"model": "P420", "backup_power": '
                             '{"charge_percent": 5}}]}')
    assert '"charge_percent": 5.0' in to_json(snapshot)
    with pytest.raises(ValueError, match="charge_percent"):
        read_snapshot('{"controllers": [{"model": "P420", "backup_power": '
                      '{"charge_percent": "5"}}]}')


def test_the_json_is_utf8_text_not_ascii_escapes():
    snapshot = Snapshot(notices=["Température élevée"])
    assert '"Température élevée"' in to_json(snapshot)
