"""``status`` shows what moves (issue #28, finding 4): a line under each controller for each
drive that is not plainly ok, which ``check`` names too; ``status --json`` is the model."""

from __future__ import annotations

import json

from smartarray_agent.cli import plugin, table
from smartarray_agent.common.model import Controller, LogicalDrive, PhysicalDrive, Snapshot

from .agent_cli import agent as run_agent
from .captures import REAL, needs_captures


def _box(*, rebuilding: bool) -> Snapshot:
    lds = [LogicalDrive(drive_id="1", status="recovering" if rebuilding else "ok",
                        progress_percent=54.73 if rebuilding else None),
           LogicalDrive(drive_id="2", status="ok")]
    pds = [PhysicalDrive(drive_id="1I:1:1", status="ok", usage_remaining_percent=97.0),
           PhysicalDrive(drive_id="1I:1:2", status="ok", usage_remaining_percent=3.0),
           PhysicalDrive(drive_id="1I:1:3", status="erase_in_progress", progress_percent=66.0),
           PhysicalDrive(drive_id="1I:1:4", status="predictive_failure")]
    if rebuilding:
        pds.append(PhysicalDrive(drive_id="2I:1:5", status="failed", failure_reason="Timeout"))
    return Snapshot(controllers=[Controller(model="Smart Array P440ar", slot="0",
                                            status="ok", logical_drives=lds,
                                            physical_drives=pds)])


def test_status_lists_each_drive_that_is_not_plainly_ok_under_its_controller():
    shown = table.render(_box(rebuilding=True)).splitlines()
    listed = [line for line in shown if line.startswith("  * ")]
    assert listed == [
        "  * logical drive 1: recovering 54.73%",
        "  * physical drive 1I:1:2: SSD 3% usage remaining",
        "  * physical drive 1I:1:3: erase in progress 66%",
        "  * physical drive 1I:1:4: predictive failure",
        "  * physical drive 2I:1:5: failed (Timeout)",
    ]
    assert shown.index(listed[0]) > next(i for i, line in enumerate(shown)
                                         if line.startswith("  physical drives"))


def test_a_healthy_box_lists_nothing():
    healthy = Snapshot(controllers=[Controller(
        model="Smart Array P440ar", slot="0", logical_drives=[LogicalDrive(drive_id="1",
                                                                          status="ok")],
        physical_drives=[PhysicalDrive(drive_id="1I:1:1", status="ok",
                                       usage_remaining_percent=80.0)])])
    assert "  * " not in table.render(healthy)


def test_check_names_what_moves_and_what_wears_in_its_ok_line_and_problems_in_others():
    thresholds = plugin.Thresholds()
    quiet = _box(rebuilding=False)
    quiet.controllers[0].physical_drives.pop()  # no predictive failure: an OK box
    result = plugin.judge(quiet, thresholds)
    assert result.code == plugin.OK
    line = result.line(plugin.summary(quiet))
    assert "slot 0 physical drive 1I:1:3 erase in progress 66%" in line
    assert "slot 0 physical drive 1I:1:2 SSD 3% usage remaining" in line
    busy = _box(rebuilding=True)
    result = plugin.judge(busy, thresholds)
    assert result.code == plugin.CRITICAL
    line = result.line(plugin.summary(busy))
    assert "slot 0 logical drive 1 recovering 54.73%" in line
    assert "slot 0 physical drive 2I:1:5 failed" in line


@needs_captures
def test_a_real_erase_shows_in_status_and_check_and_json_is_the_model():
    capture = REAL / "ssacli-ctrl-all-show-config-detail-P440-2.txt"
    status = run_agent("status", "--input", str(capture))
    assert "  * physical drive 1I:2:1: erase in progress" in status.stdout
    check = run_agent("check", "--input", str(capture))
    assert check.returncode == 0 and "physical drive 1I:2:1 erase in progress" in check.stdout
    shown = run_agent("status", "--json", "--input", str(capture)).stdout
    assert json.loads(Snapshot.model_validate_json(shown).model_dump_json()) == json.loads(shown)
    assert "erase in progress" not in shown  # the JSON is the model: no notes added to it
