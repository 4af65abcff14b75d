"""What the write path says after the write, the command form per generation, unknown
switches, and the kinds table: in-process against the simulator and real captures."""

from __future__ import annotations

import copy
import os
import signal

import pytest

from smartarray_agent.cli.change import exit_code
from smartarray_agent.cli.exitcodes import UNPROTECTED
from smartarray_agent.collectors.ssacli.errors import CliTimeout
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.common.policy import judge, write_cache_active
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import ChangeRunner
from smartarray_agent.write.kinds import KINDS, Change, Kind

from .captures import REAL, needs_captures
from .test_write_property import SimHost, apply

NBWC_ON = Change(Kind.NO_BATTERY_WRITE_CACHE, enable=True)
RAISE = Change(Kind.CACHE_RATIO, read_percent=0, write_percent=100)


class BatteryFailsOnWrite(SimHost):
    """The battery fails between the judgement and the re-read."""

    def run(self, command: list[str], *, confirm: bool = False) -> str:
        output = super().run(command, confirm=confirm)
        if "modify" in command and "cacheratio=?" not in command:
            self.mutate(battery="Failed (Replace Batteries)")
        return output


def test_write_cache_left_unprotected_after_the_write_is_said_and_exits_non_zero(tmp_path):
    audit = tmp_path / "audit.jsonl"
    host = BatteryFailsOnWrite(tmp_path, "gen9-battery", {}, audit)
    outcome = apply(host, audit, NBWC_ON)
    assert outcome.result == "changed" and outcome.unprotected
    assert "backup power is now batteries failed: write cache is unprotected" in outcome.message
    assert outcome.after is not None and outcome.after["no_battery_write_cache"] is True
    assert exit_code(outcome) == UNPROTECTED
    assert host.audit.read_text().count('"unprotected":true') == 1  # the outcome record


def test_write_cache_that_stays_inactive_after_the_write_is_said_and_exits_0(tmp_path):
    audit = tmp_path / "audit.jsonl"
    host = BatteryFailsOnWrite(tmp_path, "gen9-battery", {}, audit)
    host.mutate(read_percent=50, write_percent=50)
    outcome = apply(host, audit, RAISE)
    assert outcome.result == "changed" and not outcome.unprotected
    assert "write cache stays inactive until backup power is back" in outcome.message
    assert exit_code(outcome) == 0


@pytest.mark.parametrize("scenario", ["hpacucli-legacy", "gen8-capacitor", "gen9-battery",
                                      "gen10"])
def test_logical_drive_caching_is_sent_as_arrayaccelerator_on_every_generation(tmp_path,
                                                                              scenario):
    audit = tmp_path / "audit.jsonl"
    host = SimHost(tmp_path, scenario, {}, audit)
    outcome = apply(host, audit, Change(Kind.LOGICAL_DRIVE_CACHING, enable=False,
                                        logical_drive="1"))
    assert outcome.result == "changed", outcome.message
    assert host.modifies == ["ctrl slot=0 ld 1 modify arrayaccelerator=disable"]
    assert host.state().controllers[0].logical_drives[0].caching is False


@needs_captures
def test_a_cache_board_without_a_no_battery_write_cache_line_fails_closed():
    [ctrl] = parse((REAL / "ssacli-ctrl-all-show-config-detail-P822-2.txt").read_text(
        errors="replace")).controllers
    assert ctrl.cache.present is True and ctrl.cache.no_battery_write_cache is None
    failed = copy.deepcopy(ctrl)
    failed.backup_power.status, failed.backup_power.status_text = "failed", "Failed"
    failed.cache.status, failed.cache.write_percent = "ok", 50
    caching_on = Change(Kind.LOGICAL_DRIVE_CACHING, enable=True, logical_drive="1")
    for change in (caching_on, RAISE):
        verdict = judge(failed, change, 80.0)
        assert not verdict.allowed
        assert "does not say whether no-battery write cache is on" in verdict.message
    assert write_cache_active(failed) is None  # unknown, never "off"


def test_every_kind_has_a_table_entry_with_its_row_label_and_command():
    examples = {Kind.CACHE_RATIO: RAISE, Kind.NO_BATTERY_WRITE_CACHE: NBWC_ON,
                Kind.DRIVE_WRITE_CACHE: Change(Kind.DRIVE_WRITE_CACHE, enable=True),
                Kind.LOGICAL_DRIVE_CACHING: Change(Kind.LOGICAL_DRIVE_CACHING, enable=True,
                                                   logical_drive="1")}
    assert set(KINDS) == set(Kind) == set(examples)
    for kind, entry in KINDS.items():
        assert entry.row.confirm == (kind in (Kind.NO_BATTERY_WRITE_CACHE,
                                              Kind.DRIVE_WRITE_CACHE))
        assert (entry.warning != "") == entry.row.confirm
        assert examples[kind].describe().startswith(entry.label(examples[kind]))


class InterruptedOnTheRead(SimHost):
    """Ctrl-C arrives while the write path reads the controller under the lock."""

    def run(self, command: list[str], *, confirm: bool = False) -> str:
        if command[:2] == ["ctrl", "all"]:
            os.kill(os.getpid(), signal.SIGINT)
        return super().run(command, confirm=confirm)


def test_an_interrupt_before_the_command_is_sent_stops_it_and_sends_nothing(tmp_path):
    """Until its intent is recorded a change has sent nothing, and Ctrl-C stops it at once
    (a read that hangs is not waited for); from the intent on it is held (test_write_faults)."""
    audit = tmp_path / "audit.jsonl"
    host = InterruptedOnTheRead(tmp_path, "gen9-battery", {}, audit)
    with pytest.raises(KeyboardInterrupt):
        apply(host, audit, NBWC_ON)
    assert host.modifies == []
    assert not audit.exists() or "intent" not in audit.read_text()
    assert host.state().controllers[0].cache.no_battery_write_cache is False


class SecondControllerUnreadable(SimHost):
    """The CLI times out asking the second controller of --all which ratios it takes."""

    def run(self, command: list[str], *, confirm: bool = False) -> str:
        if command == ["ctrl", "slot=1", "modify", "cacheratio=?"]:
            raise CliTimeout(command, 1)
        return super().run(command, confirm=confirm)


def test_with_all_a_controller_that_cannot_be_read_fails_alone(tmp_path):
    audit = tmp_path / "audit.jsonl"
    host = SecondControllerUnreadable(tmp_path, "two-controllers", {}, audit)
    runner = ChangeRunner(host, AuditLog(audit, to_syslog=False), 80.0,  # type: ignore[arg-type]
                          confirm=lambda question: True)
    outcomes = runner.apply(Change(Kind.CACHE_RATIO, read_percent=50, write_percent=50), None)
    assert [o.result for o in outcomes] == ["changed", "failed"]
    assert outcomes[1].message.startswith("slot 1: could not read the controller: ")
    assert outcomes[1].message.endswith(": nothing sent")
    assert [exit_code(o) for o in outcomes] == [0, 1]
    assert host.modifies == ["ctrl slot=0 modify cacheratio=50/50"]


class TerminatedOnTheFirstModify(SimHost):
    """SIGTERM arrives while the first controller's command runs."""

    def run(self, command: list[str], *, confirm: bool = False) -> str:
        if "modify" in command and "cacheratio=?" not in command and not self.modifies:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().run(command, confirm=confirm)


def test_with_all_a_signal_held_during_one_write_stops_the_next_before_it_is_sent(tmp_path):
    audit = tmp_path / "audit.jsonl"
    host = TerminatedOnTheFirstModify(tmp_path, "two-controllers", {}, audit)
    runner = ChangeRunner(host, AuditLog(audit, to_syslog=False), 80.0,  # type: ignore[arg-type]
                          confirm=lambda question: True)
    before = signal.getsignal(signal.SIGTERM)
    outcomes = runner.apply(Change(Kind.CACHE_RATIO, read_percent=50, write_percent=50), None)
    assert signal.getsignal(signal.SIGTERM) is before  # put back once the outcome is recorded
    assert [(o.result, o.interrupted) for o in outcomes] == [("changed", "SIGTERM"),
                                                            ("declined", None)]
    assert "SIGTERM before the command was sent: nothing sent" in outcomes[1].message
    assert host.modifies == ["ctrl slot=0 modify cacheratio=50/50"]
