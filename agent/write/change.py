"""The write path: read, judge, confirm, write, re-read, verify, audit.

1. Read the controller and judge the change with :mod:`.policy` (under the host lock).
2. Ask for confirmation where the interlock wants it, *without* holding the lock, so a
   prompt left open never blocks the daemon.
3. Take the lock, read again and judge again: the verdict that lets the write through is
   made on a snapshot read under the same lock as the write, so nothing can change between
   check and write. A state that moved since the confirmation is refused.
4. Write, read again, and report success only when the new state shows.

Every outcome but a dry run is audited.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from smartarray_agent.collectors.ssacli import commands
from smartarray_agent.collectors.ssacli.errors import ParseError, VendorCommandError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.model import Controller, Snapshot
from smartarray_agent.policy import Change, Kind, Verdict, judge
from smartarray_agent.write.audit import AuditLog

READ_COMMAND = ["ctrl", "all", "show", "config", "detail"]
# Accepted ratios where the CLI does not answer cacheratio=? (docs/cli.md)
FALLBACK_RATIO_STEP = {"hpacucli": 25, "hpssacli": 5, "ssacli": 5}


class ChangeFailed(RuntimeError):
    """The change was not made, or not shown afterwards; ``outcome`` says what is known."""

    def __init__(self, message: str, outcome: Outcome) -> None:
        super().__init__(message)
        self.outcome = outcome


class ChangeRefused(ChangeFailed):
    pass


class ChangeDeclined(ChangeFailed):
    pass


class NotApplied(ChangeFailed):
    pass


class BadRequest(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    slot: str | None = None
    serial: str | None = None

    def describe(self) -> str:
        return f"slot {self.slot}" if self.slot is not None else f"serial {self.serial}"


@dataclass
class Outcome:
    verdict: str  # changed, unchanged, dry-run, refused, declined, not-applied, failed
    message: str
    controller: dict = field(default_factory=dict)
    requested: dict = field(default_factory=dict)
    before: dict | None = None
    after: dict | None = None
    command: list[str] | None = None
    backup_power: str | None = None
    threshold_percent: float | None = None

    @property
    def changed(self) -> bool:
        return self.verdict == "changed"

    def as_json(self) -> dict:
        return {"changed": self.changed, "verdict": self.verdict, "before": self.before,
                "after": self.after, "requested": self.requested, "command": self.command,
                "controller": self.controller, "message": self.message}


@dataclass
class ChangeRequest:
    target: Target
    change: Change
    dry_run: bool = False
    assume_yes: bool = False


class ChangeRunner:
    def __init__(self, runner: VendorRunner, audit: AuditLog, threshold_percent: float,
                 confirm: Callable[[str], bool],
                 enrich: Callable[[Snapshot], Snapshot] = lambda snapshot: snapshot) -> None:
        """``enrich`` adds what the CLI cannot tell to every snapshot read (the iLO's
        battery charge) before the interlock judges it."""
        self.runner = runner
        self.audit = audit
        self.threshold_percent = threshold_percent
        self.confirm = confirm
        self.enrich = enrich

    def apply(self, request: ChangeRequest) -> Outcome:
        with self.runner.hold():
            ctrl, verdict, outcome = self._judged(request)
            if shows(ctrl, request.change):
                return self._record(outcome, "unchanged", "already set: nothing sent")
            outcome.command = self._command(ctrl, request.change)
        if request.dry_run:
            outcome.verdict = "dry-run"
            outcome.message = f"would run: {' '.join(outcome.command)} ({verdict.message})"
            return outcome
        if verdict.needs_confirmation and not request.assume_yes:
            question = (f"{ctrl.name}: {request.change.describe()} ({verdict.message}). "
                        "Continue?")
            if not self.confirm(question):
                self._record(outcome, "declined", "not confirmed: nothing sent")
                raise ChangeDeclined(outcome.message, outcome)
        self._check_audit_writable()
        return self._write(request, outcome)

    # -- the write, under the lock --------------------------------------------------
    def _write(self, request: ChangeRequest, planned: Outcome) -> Outcome:
        with self.runner.hold():
            ctrl, verdict, outcome = self._judged(request)
            if outcome.before != planned.before:
                outcome.message = ("refused: the controller changed since it was checked "
                                   f"(was {planned.before}, now {outcome.before}); run again")
                self._record(outcome, "refused", outcome.message)
                raise ChangeRefused(outcome.message, outcome)
            if shows(ctrl, request.change):
                return self._record(outcome, "unchanged", "already set: nothing sent")
            outcome.command = self._command(ctrl, request.change)
            # The CLI's own (y/n) question (drive write cache) is answered yes only here,
            # after the interlock allowed the change and the operator confirmed it.
            vendor_confirm = request.change.kind is Kind.DRIVE_WRITE_CACHE and bool(
                request.change.enable)
            try:
                self.runner.run(outcome.command, confirm=vendor_confirm)
            except VendorCommandError as error:
                self._record(outcome, "failed", f"the CLI refused the change: {error}")
                raise ChangeFailed(outcome.message, outcome) from error
            after = self._controller(request.target)
        outcome.after = settings(after)
        if not shows(after, request.change):
            self._record(outcome, "not-applied",
                         f"sent {' '.join(outcome.command)}, but the controller shows "
                         f"{_differences(outcome.before, outcome.after)}")
            raise NotApplied(outcome.message, outcome)
        done = f"{after.name}: {request.change.describe()}"
        if not verdict.backup.protected:
            done += f" ({verdict.message})"
        return self._record(outcome, "changed", done)

    # -- helpers ------------------------------------------------------------------------
    def _judged(self, request: ChangeRequest) -> tuple[Controller, Verdict, Outcome]:
        """Read the controller and judge the change; a refusal is audited and raised."""
        ctrl = self._controller(request.target)
        verdict = judge(ctrl, request.change, self.threshold_percent)
        outcome = self._outcome(ctrl, request.change, verdict)
        if not verdict.allowed:
            self._record(outcome, "refused", verdict.message)
            raise ChangeRefused(verdict.message, outcome)
        return ctrl, verdict, outcome

    def _controller(self, target: Target) -> Controller:
        try:
            snapshot = parse(self.runner.run(READ_COMMAND))
        except ParseError as error:
            raise BadRequest(f"could not read the controllers: {error}") from None
        return select(self.enrich(snapshot), target)

    def _outcome(self, ctrl: Controller, change: Change, verdict: Verdict) -> Outcome:
        return Outcome(
            verdict="planned", message=verdict.message,
            controller={"slot": ctrl.slot, "model": ctrl.model, "serial": ctrl.serial},
            requested=requested(change), before=settings(ctrl),
            backup_power=verdict.backup.summary, threshold_percent=verdict.threshold_percent,
        )

    def _record(self, outcome: Outcome, verdict: str, message: str) -> Outcome:
        outcome.verdict, outcome.message = verdict, message
        entry = {k: v for k, v in vars(outcome).items()}
        self.audit.record(entry)
        return outcome

    def _check_audit_writable(self) -> None:
        path = self.audit.path
        path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640))

    def _command(self, ctrl: Controller, change: Change) -> list[str]:
        slot = ctrl.slot
        if slot is None:
            raise BadRequest(f"{ctrl.name} has no slot; changes need one")
        if change.kind is Kind.CACHE_RATIO:
            assert change.read_percent is not None and change.write_percent is not None
            accepted = self._accepted_ratios(slot)
            if (change.read_percent, change.write_percent) not in accepted:
                shown = ", ".join(f"{r}/{w}" for r, w in accepted)
                raise BadRequest(f"{ctrl.name} does not accept the cache ratio "
                                 f"{change.read_percent}/{change.write_percent}; it accepts "
                                 f"{shown}")
            return commands.cache_ratio(slot, change.read_percent, change.write_percent)
        assert change.enable is not None
        if change.kind is Kind.NO_BATTERY_WRITE_CACHE:
            return commands.no_battery_write_cache(slot, change.enable)
        if change.kind is Kind.DRIVE_WRITE_CACHE:
            gen10 = ctrl.cache.drive_write_cache_policy is not None
            if gen10 and change.usage is None:
                raise BadRequest(f"{ctrl.name} sets drive write cache per usage: "
                                 "give --usage configured, unconfigured or hba")
            if not gen10 and change.usage is not None:
                raise BadRequest(f"{ctrl.name} has one drive write cache switch: no --usage")
            return commands.drive_write_cache(slot, change.enable, change.usage)
        drive = _logical_drive(ctrl, change.logical_drive)
        old_label = any(key == "Array Accelerator" for key, _ in drive.raw)
        return commands.logical_drive_caching(slot, drive.drive_id, change.enable, old_label)

    def _accepted_ratios(self, slot: str) -> list[tuple[int, int]]:
        try:
            listed = commands.ratio_options(self.runner.run(commands.cache_ratio_options(slot)))
        except VendorCommandError:
            listed = []
        if listed:
            return listed
        step = FALLBACK_RATIO_STEP.get(self.runner.cli.name, 5)
        return [(read, 100 - read) for read in range(0, 101, step)]


def select(snapshot: Snapshot, target: Target) -> Controller:
    found = [c for c in snapshot.controllers
             if (target.slot is not None and c.slot == target.slot)
             or (target.serial is not None and c.serial == target.serial)]
    if not found:
        known = ", ".join(c.name for c in snapshot.controllers) or "none"
        raise BadRequest(f"no controller with {target.describe()} (controllers: {known})")
    if len(found) > 1:
        raise BadRequest(f"{target.describe()} names {len(found)} controllers; use --serial")
    return found[0]


def settings(ctrl: Controller) -> dict:
    """The settings the write path changes, as the controller shows them."""
    cache = ctrl.cache
    policy = cache.drive_write_cache_policy
    return {
        "cache_ratio": (f"{cache.read_percent}/{cache.write_percent}"
                        if cache.read_percent is not None else None),
        "no_battery_write_cache": cache.no_battery_write_cache,
        "drive_write_cache": cache.drive_write_cache,
        "drive_write_cache_policy": policy.model_dump() if policy else None,
        "logical_drive_caching": {d.drive_id: d.caching for d in ctrl.logical_drives},
    }


def requested(change: Change) -> dict:
    return {k: v for k, v in vars(change).items() if v is not None} | {"kind": str(change.kind)}


def shows(ctrl: Controller, change: Change) -> bool:
    """Whether ``ctrl`` already shows ``change`` made."""
    cache = ctrl.cache
    if change.kind is Kind.CACHE_RATIO:
        return (cache.read_percent, cache.write_percent) == (change.read_percent,
                                                              change.write_percent)
    if change.kind is Kind.NO_BATTERY_WRITE_CACHE:
        return cache.no_battery_write_cache is change.enable
    if change.kind is Kind.DRIVE_WRITE_CACHE:
        policy = cache.drive_write_cache_policy
        if change.usage is None or policy is None:
            return cache.drive_write_cache is change.enable
        return getattr(policy, change.usage) == ("enable" if change.enable else "disable")
    return _logical_drive(ctrl, change.logical_drive).caching is change.enable


def _logical_drive(ctrl: Controller, drive_id: str | None):
    for drive in ctrl.logical_drives:
        if drive.drive_id == drive_id:
            return drive
    known = ", ".join(d.drive_id for d in ctrl.logical_drives) or "none"
    raise BadRequest(f"{ctrl.name} has no logical drive {drive_id} (logical drives: {known})")


def _differences(before: dict | None, after: dict | None) -> str:
    if before is None or after is None:
        return "no readable state"
    changed = {k: after[k] for k in after if after[k] != before.get(k)}
    return f"no change ({after})" if not changed else f"only {changed}"
