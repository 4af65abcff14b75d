"""The write path: read and judge under the lock, confirm where asked, record the intent,
write, re-read, verify, record the outcome (docs/cli.md, "How a change is made", tells each
step). One vendor CLI session under the lock holds the read, the judgement
(:mod:`smartarray_agent.common.policy`) and, for a change that asks nothing, the write. One
that asks lets go of the lock while it asks (a prompt left open never blocks the daemon),
then reads the iLO again and reads and judges again in a new session, where a state that
moved since the question is refused. Nothing is sent before the intent record is written
(flushed); from then on SIGINT/SIGTERM/SIGHUP are held off until the outcome is on record.

:meth:`ChangeRunner.apply` returns an :class:`Outcome` for every result but a request that
does not fit the controller (:class:`~smartarray_agent.write.kinds.BadRequest`, nothing
sent) and a first read that fails (the runner's errors, nothing sent). :meth:`ChangeRunner.
apply_all` makes one change on every controller with a cache in one session.
"""

from __future__ import annotations

import copy
import functools
import math
import shlex
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli import commands
from smartarray_agent.collectors.ssacli.errors import ParseError, SsacliError, VendorCommandError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.common.policy import Verdict, judge
from smartarray_agent.write import signals
from smartarray_agent.write.audit import AuditError, AuditLog
from smartarray_agent.write.kinds import KINDS, BadRequest, Change, vendor_command
from smartarray_agent.write.reconcile import (
    ControllerUnreadable,
    UnfinishedChange,
    reconcile,
)

READ_COMMAND = commands.show_config()
READ_ERRORS = (SsacliError, BadRequest)
_T = TypeVar("_T")
Judged = tuple[Controller, Verdict, "Outcome"]  # the controller, the verdict, the planned outcome


@dataclass(frozen=True)
class Target:
    slot: str | None = None
    serial: str | None = None

    def describe(self) -> str:
        return f"slot {self.slot}" if self.slot is not None else f"serial {self.serial}"


@dataclass
class Outcome:
    """``verdict``: changed, unchanged, dry_run, refused, declined, not_applied, failed,
    unknown, or not_sent (the intent record could not be written)."""

    verdict: str
    message: str
    controller: dict = field(default_factory=dict)
    requested: dict = field(default_factory=dict)
    before: dict | None = None
    after: dict | None = None
    command: list[str] | None = None
    backup_power: str | None = None
    threshold_percent: float | None = None
    charge_percent: float | None = None  # the iLO charge that was judged
    charge_read_at: str | None = None  # when the iLO gave it (ISO 8601, UTC)
    unprotected: bool = False  # after the change, write cache is on with no healthy backup
    interrupted: str | None = None  # the signal held off while the command ran
    audit: dict = field(default_factory=dict)  # {"outcome": ..., "file": ..., "error": ...}
    ident: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def changed(self) -> bool:
        return self.verdict == "changed"

    def as_json(self) -> dict:
        return {"changed": self.changed, "verdict": self.verdict, "before": self.before,
                "after": self.after, "requested": self.requested, "command": self.command,
                "controller": self.controller, "message": self.message, "audit": self.audit}

    def record(self, event: str) -> dict:
        """The audit record of ``event`` (``intent`` or ``outcome``)."""
        return {"id": self.ident, "event": event,
                "outcome": self.verdict if event == "outcome" else None,
                "verdict": "allowed" if event == "intent" else None,
                "controller": self.controller, "requested": self.requested,
                "before": self.before, "after": self.after, "command": self.command,
                "backup_power": self.backup_power, "threshold_percent": self.threshold_percent,
                "charge_percent": self.charge_percent, "charge_read_at": self.charge_read_at,
                "unprotected": self.unprotected, "interrupted": self.interrupted,
                "message": self.message}


@dataclass
class ChangeRequest:
    target: Target
    change: Change
    dry_run: bool = False
    assume_yes: bool = False
    without_charge: bool = False  # enable though the configured iLO cannot be read


class ChangeRunner:
    def __init__(self, runner: VendorRunner, audit: AuditLog, threshold_percent: float,
                 confirm: Callable[[str], bool], charge: Charge | None = None) -> None:
        """``charge`` adds what the CLI cannot tell (the iLO's battery charge) to every
        snapshot read, and is read again after the confirmation. ``threshold_percent`` must
        be a finite number from 0 to 100 (ValueError)."""
        if not (math.isfinite(threshold_percent) and 0 <= threshold_percent <= 100):
            raise ValueError(f"the threshold {threshold_percent!r} is not a number from 0 to "
                             "100")
        self.runner = runner
        self.audit = audit
        self.threshold_percent = threshold_percent
        self.confirm = confirm
        self.charge = charge or Charge(None)  # None: no iLO, the CLI's word alone
        self.reconciled: list[str] = []  # what it said of the unfinished changes it closed
        self.skipped: list[dict] = []  # apply_all's controllers with no cache module

    def apply(self, request: ChangeRequest) -> Outcome:
        try:
            self.audit.check()
        except AuditError as error:
            return self._not_sent(request, error)
        with signals.held() as received, self.runner.session():
            judged = self._may_go_ahead(request)
            if isinstance(judged, Outcome):
                return judged
            ask = self._go_on(request, judged, received)
            if isinstance(ask, Outcome):
                return ask
        return self._confirmed(request, judged, ask)

    def apply_all(self, change: Change, *, dry_run: bool = False, assume_yes: bool = False,
                  without_charge: bool = False) -> list[Outcome]:
        """``change`` on every controller but those that report no cache module (``--all``;
        those go to :attr:`skipped`, and one whose cache is unknown is judged, never taken as
        safe), each judged, written, verified and audited on its own, all in one session: one
        read of the controllers, then each one's query, modify and verifying read. A
        controller whose change asks a question is asked after the session, and written in a
        session of its own. What fails before anything was sent goes as :meth:`_explained`
        says; the lock and the first read fail as in :meth:`apply`."""
        try:
            self.audit.check()
        except AuditError as error:
            return [self._not_sent(ChangeRequest(Target(), change), error)]
        done: list[Outcome | tuple[ChangeRequest, Judged, str]] = []
        with signals.held() as received, self.runner.session():
            snapshot = self._snapshot(READ_COMMAND)
            for ctrl in snapshot.controllers:
                if ctrl.cache.present is False:
                    self.skipped.append({"slot": ctrl.slot, "serial": ctrl.serial,
                                         "model": ctrl.model})
                    continue
                target = (Target(slot=ctrl.slot) if ctrl.slot is not None
                          else Target(serial=ctrl.serial))
                request = ChangeRequest(target, change, dry_run, assume_yes, without_charge)
                done.append(self._explained(request, functools.partial(
                    self._one_of_all, request, snapshot, received)))
        return [one if isinstance(one, Outcome)
                else self._explained(one[0], functools.partial(self._confirmed, *one))
                for one in done]

    def _one_of_all(self, request: ChangeRequest, snapshot: Snapshot, received: signals.Held
                    ) -> Outcome | tuple[ChangeRequest, Judged, str]:
        """One controller of :meth:`apply_all`, in its session: its outcome, or what to ask."""
        judged = self._may_go_ahead(request, snapshot)
        if isinstance(judged, Outcome):
            return judged
        ask = self._go_on(request, judged, received)
        return (request, judged, ask) if isinstance(ask, str) else ask

    def _go_on(self, request: ChangeRequest, judged: Judged, received: signals.Held
               ) -> Outcome | str:
        """In the change's session, after the judgement: the outcome of a dry run, a change
        stopped by a signal, or one that asks nothing (written now); else the question."""
        ctrl, verdict, outcome = judged
        if request.dry_run:
            return self._finish(outcome, "dry_run", f"would run: {self._shown(outcome)} "
                                                    f"({verdict.message})")
        if not verdict.needs_confirmation or request.assume_yes:
            return self._write(request, judged, received)
        warning = request.change.entry.warning
        return (f"{ctrl.name}: {request.change.describe()} ({verdict.message}). "
                f"{warning + ' ' if warning else ''}Continue?")

    def _confirmed(self, request: ChangeRequest, planned: Judged, question: str) -> Outcome:
        """Ask ``question`` without the lock; on a yes, read the iLO again, then read and
        judge again in a new session, and write there."""
        outcome = planned[2]
        if not self.confirm(question):
            return self._finish(outcome, "declined", "not confirmed: nothing sent")
        if self.charge.configured:
            # Fresh, and before the lock (the iLO is slow). A read that fails forgets the
            # first one, so the judgement under the lock sees no charge and fails closed.
            self.charge.read()
        with signals.held() as received, self.runner.session():
            judged = self._may_go_ahead(request)
            if isinstance(judged, Outcome):
                return judged
            ctrl, _, again = judged
            if again.before != outcome.before:
                return self._finish(again, "refused", (
                    f"refused: {ctrl.name} changed since it was checked (was "
                    f"{outcome.before}, now {again.before}); nothing sent, run again"))
            return self._write(request, judged, received)

    @staticmethod
    def _explained(request: ChangeRequest, step: Callable[[], _T]) -> _T | Outcome:
        """``step``'s outcome, where a request that does not fit the controller is a
        ``bad_request`` outcome and a CLI that cannot be read before anything was sent a
        ``failed`` one (neither is audited: nothing was judged): ``--all`` goes on."""
        try:
            return step()
        except BadRequest as error:
            verdict, message = "bad_request", str(error)
        except SsacliError as error:
            verdict = "failed"
            message = (f"{request.target.describe()}: could not read the controller: {error}: "
                       "nothing sent")
        return Outcome(verdict, message, controller={"slot": request.target.slot},
                       requested=request.change.requested())

    # -- the write, under the lock --------------------------------------------------
    def _write(self, request: ChangeRequest, judged: Judged, received: signals.Held) -> Outcome:
        """In the change's session, with signals held: record the intent, send, verify and
        record the outcome. The lock is held from the intent to the outcome: an intent that
        someone else finds open under the lock is a change that was killed
        (write/reconcile.py)."""
        ctrl, _, outcome = judged
        received.arm()  # a signal from here on waits for the outcome to be on record
        if received:  # --all: one arrived while an earlier controller's change was sent
            name = signal.Signals(received[0]).name
            return self._finish(outcome, "declined",
                                f"{name} before the command was sent: nothing sent")
        try:
            self._record(outcome, "intent")
        except AuditError as error:
            outcome.verdict, outcome.message = "not_sent", f"{error}: nothing sent"
            outcome.audit = self._unrecorded(error)
            return outcome
        self._send(request, ctrl, outcome)
        if received:
            outcome.interrupted = signal.Signals(received[0]).name
            outcome.message += (f" ({outcome.interrupted} arrived while the command ran: "
                                "it was let finish and recorded)")
        return self._finish(outcome, outcome.verdict, outcome.message)

    def reconcile(self) -> list[UnfinishedChange]:
        """Take the lock and reconcile the audit log's unfinished changes (what it says of
        those it closes goes to :attr:`reconciled`); the ones left open. Raises AuditError
        when the log cannot be read, and the runner's lock errors."""
        with self.runner.hold():
            done, still_open = reconcile(self.audit, self._read_for, settings)
        self.reconciled += done
        return still_open

    def _may_go_ahead(self, request: ChangeRequest, snapshot: Snapshot | None = None
                      ) -> Judged | Outcome:
        """Under the lock: the controller, the verdict and the ``planned`` outcome when the
        change may go ahead; else the finished outcome alone (blocked by an unfinished
        change, refused or unchanged). ``snapshot``: the controllers as read under this
        hold of the lock (``--all``), else they are read now."""
        blocked = self._unfinished(request)
        if blocked is not None:
            return blocked
        ctrl, verdict, outcome = self._judged(request, snapshot)
        return outcome if outcome.verdict != "planned" else (ctrl, verdict, outcome)

    def _not_sent(self, request: ChangeRequest, error: AuditError) -> Outcome:
        """The audit file cannot be written: nothing is sent, and the outcome says why."""
        return Outcome("not_sent", f"{error}: nothing sent",
                       controller={"slot": request.target.slot, "serial": request.target.serial},
                       requested=request.change.requested(), audit=self._unrecorded(error))

    def _unfinished(self, request: ChangeRequest) -> Outcome | None:
        """Under the lock: reconcile the audit log's unfinished changes; a refusal when one
        to this controller stays open (it could not be read: what it did is not known)."""
        target = request.target
        try:
            still_open = self.reconcile()
        except AuditError as error:  # what is open cannot be known: nothing is sent
            return self._not_sent(request, error)
        blocking = [c for c in still_open if c.names(target.slot, target.serial)]
        if not blocking:
            return None
        outcome = Outcome("planned", "", controller={"slot": target.slot,
                                                     "serial": target.serial},
                          requested=request.change.requested())
        return self._finish(outcome, "refused", (
            f"refused: an earlier change to {target.describe()} never recorded its outcome "
            f"and the controller cannot be read to reconcile it: {blocking[0].describe()} in "
            f"{self.audit.path}; nothing sent (check the controller with `smartarray-agent "
            "status`, which reconciles it once it can be read)"))

    def _read_for(self, change: UnfinishedChange) -> Controller:
        """The controller of an unfinished change, read now (ControllerUnreadable)."""
        slot = change.controller.get("slot")
        try:
            snapshot = self._snapshot(commands.show_config(slot) if slot else READ_COMMAND)
        except READ_ERRORS as error:
            raise ControllerUnreadable(str(error)) from None
        return controller_of(change, snapshot)

    def _send(self, request: ChangeRequest, ctrl: Controller, outcome: Outcome) -> None:
        """Send the command and read again; set the outcome's verdict, message and after."""
        command = outcome.command or []
        shown = self._shown(outcome)
        sent_error: Exception | None = None
        try:
            self.runner.run(command, once=True)
        except SsacliError as error:
            sent_error = error
        try:
            after = select(self._snapshot(commands.show_config(ctrl.slot or "")), request.target)
        except READ_ERRORS as error:
            outcome.verdict = "unknown"
            outcome.message = (
                f"sent {shown} to {ctrl.name}"
                + (f" ({sent_error})" if sent_error else "")
                + f", but could not read the controller afterwards: {error}. Outcome unknown: "
                f"check with `smartarray-agent status` (or `{self.runner.cli.name} "
                f"{shlex.join(commands.show_config(ctrl.slot or ''))}`) whether "
                f"{request.change.describe()} shows")
            return
        outcome.after = settings(after)
        shows = request.change.entry.shows(after, request.change)
        note = f" (the CLI: {sent_error})" if sent_error else ""
        if shows:
            self._changed(request.change, ctrl, after, outcome, note)
        elif isinstance(sent_error, VendorCommandError):
            outcome.verdict = "failed"
            outcome.message = f"the CLI refused the change: {sent_error}"
        else:
            outcome.verdict = "not_applied"
            outcome.message = (f"sent {shown}{note} to {after.name}, but the controller shows "
                               f"{_differences(outcome.before, outcome.after)}")

    def _changed(self, change: Change, before: Controller, after: Controller,
                 outcome: Outcome, note: str) -> None:
        """A change that shows; says when backup power is no longer healthy."""
        outcome.verdict = "changed"
        outcome.message = f"{after.name}: {change.describe()}{note}"
        now = copy.deepcopy(before)
        now.backup_power = after.backup_power
        now.cache.status, now.cache.status_details = (after.cache.status,
                                                      after.cache.status_details)
        post = judge(now, change, self.threshold_percent)
        outcome.backup_power = post.backup.summary
        if not post.allowed:
            outcome.unprotected = True
            outcome.message += (f"; WARNING: backup power is now {post.backup.summary}: "
                                 "write cache is unprotected (turn it off with "
                                 "`smartarray-agent write-cache disable ...`)")
        elif change.asks_write_cache() and not post.backup.protected:
            outcome.message += (f"; write cache stays inactive until backup power is back "
                                f"({post.backup.summary})")

    # -- helpers ------------------------------------------------------------------------
    def _judged(self, request: ChangeRequest, snapshot: Snapshot | None = None) -> Judged:
        """Read the controller (or take it from ``snapshot``) and judge the change. The
        outcome is ``planned`` when the change may go ahead; else it is finished (refused or
        unchanged) and recorded."""
        ctrl = select(self._snapshot(READ_COMMAND) if snapshot is None else snapshot,
                      request.target)
        change = request.change
        change.entry.check(ctrl, change, self.runner)
        charge_error = None if request.without_charge else self.charge.unread(ctrl)
        verdict = judge(ctrl, change, self.threshold_percent, charge_error)
        outcome = Outcome(
            verdict="planned", message=verdict.message,
            controller={"slot": ctrl.slot, "model": ctrl.model, "serial": ctrl.serial},
            requested=change.requested(), before=settings(ctrl),
            command=vendor_command(ctrl, change), backup_power=verdict.backup.summary,
            threshold_percent=verdict.threshold_percent,
            charge_percent=ctrl.backup_power.charge_percent,
            charge_read_at=_iso(self.charge.read_at)
            if ctrl.backup_power.charge_percent is not None else None,
        )
        if not verdict.allowed:
            message = verdict.message
            if charge_error is not None and change.adds_cache(ctrl):
                message += (" (to go ahead on the CLI's word alone: --without-ilo-charge, or "
                            "[policy] enable_without_ilo_charge = true)")
            self._finish(outcome, "refused", message)
        elif change.entry.shows(ctrl, change):
            self._finish(outcome, "unchanged", f"{ctrl.name}: {change.describe()} is already "
                                               "set: nothing sent")
        return ctrl, verdict, outcome

    def _snapshot(self, command: list[str]) -> Snapshot:
        """The controllers ``command`` shows, with the iLO's charge laid over them."""
        try:
            return self.charge.overlay(parse(self.runner.run(command)))
        except ParseError as error:
            raise BadRequest(f"could not read the controllers: {error}") from None

    def _finish(self, outcome: Outcome, verdict: str, message: str) -> Outcome:
        """Set the result and record it; a record that cannot be written is said in the
        outcome (nothing more is sent either way)."""
        outcome.verdict, outcome.message = verdict, message
        try:
            self._record(outcome, "outcome")
        except AuditError as error:
            outcome.audit = self._unrecorded(error)
            outcome.message += f" (WARNING: not recorded: {error})"
        return outcome

    def _unrecorded(self, error: AuditError) -> dict:
        return {"outcome": None, "file": str(self.audit.path), "error": str(error)}

    def _record(self, outcome: Outcome, event: str) -> None:
        self.audit.record(outcome.record(event))
        outcome.audit = {"outcome": outcome.verdict if event == "outcome" else "intent",
                         "file": str(self.audit.path)}

    @staticmethod
    def _shown(outcome: Outcome) -> str:
        return shlex.join(outcome.command or [])


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


def controller_of(change: UnfinishedChange, snapshot: Snapshot) -> Controller:
    """The controller of an unfinished change in ``snapshot`` (ControllerUnreadable)."""
    slot, serial = change.controller.get("slot"), change.controller.get("serial")
    try:
        return select(snapshot, Target(slot=slot) if slot is not None else Target(serial=serial))
    except BadRequest as error:
        raise ControllerUnreadable(str(error)) from None


def settings(ctrl: Controller) -> dict:
    """The settings the write path changes, as the controller shows them: every kind's."""
    return {key: value for entry in KINDS.values()
            for key, value in entry.settings(ctrl).items()}


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")


def _differences(before: dict | None, after: dict | None) -> str:
    if before is None or after is None:
        return "no readable state"
    changed = {k: after[k] for k in after if after[k] != before.get(k)}
    return f"no change ({after})" if not changed else f"only {changed}"
