"""The write path's two promises over every (backup state x switch state x change x fault)
(in CI, ``--full-matrix``; by default every pair of them, tests/matrix.py): no unsafe enable
reaches the simulator, and every modify that reached it has an intent record written before
it and an outcome record after it.

The bundled simulator answers in this process (:class:`SimHost`: the same sessions, state
store and faults as ``smartarray-sim``, without a process per command, so the whole product
of cases runs in seconds); the write path, interlock, parser and audit are the real ones.
Two faults are not the CLI's: an iLO (the fake one, over HTTPS) that gives a charge of 99
and cannot be read once the change is confirmed, and a threshold of NaN. The same faults
through the real commands are in test_write_faults.py and test_write_holes.py.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import CliFailed, CliTimeout, VendorCommandError
from smartarray_agent.collectors.ssacli.parser import find_error
from smartarray_agent.simulator import resolve_scenario
from smartarray_agent.simulator.commands import canonical
from smartarray_agent.simulator.dialect import DIALECTS
from smartarray_agent.simulator.faults import matches
from smartarray_agent.simulator.scenario import Scenario, faults_with
from smartarray_agent.simulator.session import Crashed, Session
from smartarray_agent.simulator.state import StateStore
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import ChangeRunner, Outcome
from smartarray_agent.write.kinds import Change, Kind, Target

from . import redfish_ilo as fake
from .matrix import cases


class SimHost:
    """A simulated host answering in-process, as :class:`VendorRunner` answers: ``Error:``
    raises VendorCommandError, a crash CliFailed, a hang CliTimeout (the runner kills a
    hung CLI at its timeout; the simulator's hang fires before the modify applies)."""

    def __init__(self, tmp_path: Path, scenario: str, faults: dict, audit: Path) -> None:
        self.store = StateStore(tmp_path / "sim", resolve_scenario(scenario))
        base, _ = self.store.load()
        self.faults = faults_with(base.faults, faults)
        self.dialect = DIALECTS[base.generation]
        self.cli = VendorCli(("smartarray-sim",), "simulator")
        self.audit = audit
        self.modifies: list[str] = []  # modify commands that reached the simulator

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        yield

    session = hold  # every call answers in-process: a console is nothing to open

    def run(self, command: list[str], *, confirm: bool = False, once: bool = False) -> str:
        text = canonical(command)
        if " modify " in f" {text} " and "=?" not in text:
            self.modifies.append(text)
            self._intent_is_on_record(command)
        if matches(self.faults.hang, text):
            raise CliTimeout(command, 1)
        out = io.BytesIO()
        session = Session(self.store, self.dialect, self.faults, out, io.StringIO(""), "t")
        try:
            session.execute(list(command))
        except Crashed as crash:
            raise CliFailed(command, crash.code, out.getvalue().decode()) from None
        output = out.getvalue().decode("utf-8", errors="replace")
        error = find_error(output)
        if error is not None:
            raise VendorCommandError(text, error.message, error.kind, error.detail)
        return output

    def _intent_is_on_record(self, command: list[str]) -> None:
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        last = json.loads(lines[-1]) if lines else {}
        assert (last.get("event"), last.get("command")) == ("intent", command), \
            "a modify reached the CLI with no intent record before it"

    def state(self) -> Scenario:
        return self.store.load()[0]

    def mutate(self, **cache_and_power: object) -> None:
        def change(scenario: Scenario) -> Scenario:
            ctrl = scenario.controllers[0]
            for key, value in cache_and_power.items():
                if key == "battery":
                    ctrl.backup_power.status = value  # type: ignore[assignment]
                elif key == "count":
                    ctrl.backup_power.count = value  # type: ignore[assignment]
                elif key == "caching":
                    for drive in ctrl.logical_drives:
                        drive.caching = bool(value)
                else:
                    setattr(ctrl.cache, key, value)
            return Scenario.model_validate(scenario.model_dump(mode="json"))
        self.store.update(change)


def apply(host: SimHost, audit: Path, change: Change, threshold: float = 80.0,
          charge: Charge | None = None, asked: list[str] | None = None,
          **request: object) -> Outcome:
    """``change`` on slot 0 with ``--yes``; with ``asked``, without it: each question is
    answered yes and kept there."""

    def confirm(question: str) -> bool:
        assert asked is not None
        asked.append(question)
        return True

    runner = ChangeRunner(host, AuditLog(audit, to_syslog=False),  # type: ignore[arg-type]
                          threshold, confirm=confirm, charge=charge)
    [outcome] = runner.apply(change, Target(slot="0"), assume_yes=asked is None,
                             **request)  # type: ignore[arg-type]
    return outcome


@contextlib.contextmanager
def ilo_that_stops_answering(tmp_path: Path) -> Iterator[Charge]:
    """The charge of an iLO that answers 99 once (the command's first read) and 503 after:
    the read after the confirmation fails."""
    controller = fake.controller(serial="", model="Smart Array P440ar")
    resources = fake.ilo5(batteries=[fake.battery_ilo5(charge=99)], controllers=[controller])
    with fake.serve(fake.Ilo(resources, fail_after={fake.CHASSIS: (1, 503)})) as ilo:
        settings = RedfishSettings(address=ilo.address,
                                   credentials_file=fake.credentials_file(tmp_path),
                                   ca_file=fake.certificate()[0], read_timeout_s=5)
        charge = Charge(settings)
        assert charge.read() is not None
        yield charge


BACKUP = {  # name -> (battery status as printed, count); only exact "OK" is healthy
    "ok": ("OK", 1), "ok with a tail": ("OK (Charging)", 1), "recharging": ("Recharging", 1),
    "failed": ("Failed (Replace Batteries)", 1), "absent": (None, 0),
}
SWITCHES = {  # name -> no-battery write cache, drive write cache and logical drive caching
    "nbwc on, others on": (True, True), "nbwc on, others off": (True, False),
    "nbwc off, others on": (False, True), "nbwc off, others off": (False, False),
}
CHANGES = {
    "ratio raising writes": Change(Kind.CACHE_RATIO, read_percent=0, write_percent=100),
    "ratio lowering writes": Change(Kind.CACHE_RATIO, read_percent=50, write_percent=50),
    "nbwc on": Change(Kind.NO_BATTERY_WRITE_CACHE, enable=True),
    "nbwc off": Change(Kind.NO_BATTERY_WRITE_CACHE, enable=False),
    "dwc on": Change(Kind.DRIVE_WRITE_CACHE, enable=True),
    "dwc off": Change(Kind.DRIVE_WRITE_CACHE, enable=False),
    "caching on": Change(Kind.LOGICAL_DRIVE_CACHING, enable=True, logical_drive="1"),
    "caching off": Change(Kind.LOGICAL_DRIVE_CACHING, enable=False, logical_drive="1"),
}
MODIFIES = ["cacheratio=0/", "cacheratio=50/", "nobatterywritecache=", "drivewritecache=",
            "arrayaccelerator="]  # every modify this test sends, not the cacheratio=? query
FAULTS = {
    "none": {},
    "crash after apply": {"crash": MODIFIES},
    "hang on modify": {"hang": MODIFIES},
    "garbage re-read": {"garbage": ["ctrl slot=0 show config detail"]},
    "ignores the modify": {"ignore_modify": True},
    "(y/n) prompt": {"prompt": MODIFIES},
    "iLO stops answering after the prompt": {},
    "threshold NaN": {},
}
CASES = cases(BACKUP, SWITCHES, CHANGES, FAULTS)  # all pairs of them, every one in CI
OUTCOMES = {"changed", "unchanged", "refused", "not_applied", "failed", "unknown"}


def unsafe(backup: str, nbwc: bool, change: Change) -> bool:
    """The oracle, written from DESIGN.md's table independently of the code: an enable
    that puts writes in cache no healthy backup power protects."""
    if backup == "ok":
        return False
    if change.kind in (Kind.NO_BATTERY_WRITE_CACHE, Kind.DRIVE_WRITE_CACHE):
        return bool(change.enable)
    if change.kind is Kind.LOGICAL_DRIVE_CACHING:
        return bool(change.enable) and nbwc
    return nbwc and (change.write_percent or 0) > 90  # the scenario's write share is 90


@pytest.mark.parametrize(("backup", "switches", "change", "fault"), CASES)
def test_no_unsafe_enable_reaches_the_cli_and_every_modify_is_on_record(
        tmp_path, backup, switches, change, fault):
    audit = tmp_path / "audit.jsonl"
    host = SimHost(tmp_path, "gen9-battery", FAULTS[fault], audit)
    (status, count), (nbwc, others) = BACKUP[backup], SWITCHES[switches]
    host.mutate(battery=status, count=count, no_battery_write_cache=nbwc,
                drive_write_cache=others, caching=others)
    if fault == "threshold NaN":
        with pytest.raises(ValueError, match="threshold"):
            apply(host, audit, CHANGES[change], threshold=float("nan"))
        assert host.modifies == [] and not audit.exists()
        return
    if fault == "iLO stops answering after the prompt":
        asked: list[str] = []
        with ilo_that_stops_answering(tmp_path) as charge:
            outcome = apply(host, audit, CHANGES[change], charge=charge, asked=asked)
        if asked:  # the judgement after the question has no charge: below the threshold
            backup = "unknown"
    else:
        outcome = apply(host, audit, CHANGES[change])

    assert outcome.result in OUTCOMES
    if unsafe(backup, nbwc, CHANGES[change]):
        assert host.modifies == [], f"unsafe enable reached the CLI: {host.modifies}"
        assert outcome.result in ("refused", "unchanged")
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert len(host.modifies) <= 1
    if host.modifies:
        intent, result = records
        assert intent["event"] == "intent" and result["event"] == "outcome"
        assert intent["id"] == result["id"]
        assert result["outcome"] == outcome.result in ("changed", "not_applied", "failed",
                                                         "unknown")
    else:
        assert [r["outcome"] for r in records] == [outcome.result]
        assert outcome.result in ("refused", "unchanged")
