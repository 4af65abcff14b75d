"""The write path: read and judge under the lock, confirm where asked, record the intent,
write, re-read, verify, record the outcome (docs/cli.md, "How a change is made", tells each
step). Every step gives an :class:`Outcome`, whose :class:`Result` says what became of the
request."""

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
from enum import StrEnum

from smartarray_agent.collectors.redfish.charge import Charge
from smartarray_agent.collectors.ssacli import commands
from smartarray_agent.collectors.ssacli.errors import ParseError, SsacliError, VendorCommandError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.common.model import Controller, Snapshot
from smartarray_agent.common.policy import judge
from smartarray_agent.write import signals
from smartarray_agent.write.audit import AuditError, AuditLog
from smartarray_agent.write.history import UnfinishedChange
from smartarray_agent.write.kinds import BadRequest, Change, Target, settings, vendor_command
from smartarray_agent.write.reconcile import reconcile

READ_COMMAND = commands.show_config()


class Result(StrEnum):
    """What became of a request: the audit record's ``outcome`` (docs/cli.md lists them)
    and the command's exit code. ``PLANNED``: judged and allowed, not made yet."""

    PLANNED = "planned"
    CHANGED = "changed"
    UNCHANGED = "unchanged"  # already set: nothing sent
    DRY_RUN = "dry_run"
    REFUSED = "refused"
    DECLINED = "declined"
    NOT_APPLIED = "not_applied"
    FAILED = "failed"
    UNKNOWN = "unknown"  # sent, and the controller could not be read afterwards
    NOT_SENT = "not_sent"  # the intent record could not be written
    BAD_REQUEST = "bad_request"  # --all: a controller the request does not fit


@dataclass
class ChangeRequest:
    target: Target
    change: Change
    dry_run: bool = False
    assume_yes: bool = False
    without_charge: bool = False  # enable though the configured iLO cannot be read


RECORDED = ("controller", "requested", "before", "after", "command", "backup_power",
            "threshold_percent", "charge_percent", "charge_read_at", "unprotected",
            "interrupted", "message")  # an Outcome's fields in its audit record, in order


@dataclass
class Outcome:
    request: ChangeRequest
    result: Result
    message: str
    controller: dict = field(default_factory=dict)
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
    ctrl: Controller | None = None  # PLANNED: the controller as judged
    question: str | None = None  # PLANNED: what to ask before it is made

    def __post_init__(self) -> None:
        if not self.controller:  # not read: the target's
            self.controller = {"slot": self.request.target.slot,
                               "serial": self.request.target.serial}

    @property
    def name(self) -> str:
        """The controller's name as judged, else the target's."""
        return self.ctrl.name if self.ctrl else self.request.target.describe()

    @property
    def requested(self) -> dict:
        return self.request.change.requested()

    @property
    def changed(self) -> bool:
        return self.result is Result.CHANGED


    def as_json(self) -> dict:
        return {"changed": self.changed, "verdict": self.result, "before": self.before,
                "after": self.after, "requested": self.requested, "command": self.command,
                "controller": self.controller, "message": self.message, "audit": self.audit}

    def record(self, event: str) -> dict:
        """The audit record of ``event`` (``intent`` or ``outcome``)."""
        return {"id": self.ident, "event": event,
                "outcome": self.result if event == "outcome" else None,
                "verdict": "allowed" if event == "intent" else None,
                **{name: getattr(self, name) for name in RECORDED}}


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
        self.skipped: list[dict] = []  # --all: the controllers with no cache module

    def apply(self, change: Change, target: Target | None, *, dry_run: bool = False,
              assume_yes: bool = False, without_charge: bool = False) -> list[Outcome]:
        """``change`` on the controller ``target`` names, or (None: ``--all``) on every one
        but those that report no cache module (:attr:`skipped`; an unknown cache is judged),
        each judged, written, verified and audited on its own, in one session; one whose
        change asks is asked after it, and written in a session of its own. What fails
        before anything was sent goes as :meth:`_explained` says; the lock and the first
        read raise the runner's errors."""
        try:
            self.audit.check()
        except AuditError as error:
            return [self._not_sent(ChangeRequest(target or Target(), change), error)]
        outcomes = []
        with signals.held() as received, self.runner.session():
            snapshot = self._snapshot(READ_COMMAND)
            cached = [c for c in snapshot.controllers if c.cache.present is not False]
            if target is None:
                self.skipped = [{"slot": c.slot, "serial": c.serial, "model": c.model}
                                for c in snapshot.controllers if c.cache.present is False]
            for each in [target] if target else [Target.of(c.slot, c.serial) for c in cached]:
                request = ChangeRequest(each, change, dry_run, assume_yes, without_charge)
                outcomes.append(self._explained(request, functools.partial(
                    self._made, request, received, snapshot)))
        return [self._explained(o.request, functools.partial(self._asked, o))
                for o in outcomes]

    def reconcile(self) -> list[UnfinishedChange]:
        """Take the lock and reconcile the audit log's unfinished changes (what it says of
        those it closes goes to :attr:`reconciled`); the ones left open. Raises AuditError
        when the log cannot be read, and the runner's lock errors."""
        with self.runner.session():
            done, still_open = reconcile(self.audit, self._controllers_of)
        self.reconciled += done
        return still_open

    def _made(self, request: ChangeRequest, received: signals.Held, snapshot: Snapshot
              ) -> Outcome:
        """In the change's session: judge it, and make it when it asks nothing."""
        outcome = self._judged(request, snapshot)
        if outcome.result is Result.PLANNED and outcome.question is None:
            return self._write(outcome, received)
        return outcome

    def _asked(self, outcome: Outcome) -> Outcome:
        """A change that asks (any other outcome is returned as it is): ask its question
        without the lock; on a yes, read the iLO again, then read and judge again in a new
        session, and write there."""
        if outcome.result is not Result.PLANNED:
            return outcome
        if not self.confirm(outcome.question or ""):
            return self._finish(outcome, Result.DECLINED, "not confirmed: nothing sent")
        if self.charge.configured:
            # Fresh, and before the lock (the iLO is slow). A read that fails forgets the
            # first one, so the judgement under the lock sees no charge and fails closed.
            self.charge.read()
        with signals.held() as received, self.runner.session():
            again = self._judged(outcome.request)
            if again.result is not Result.PLANNED:
                return again
            if again.before != outcome.before:
                return self._finish(again, Result.REFUSED, (
                    f"refused: {again.name} changed since it was checked (was "
                    f"{outcome.before}, now {again.before}); nothing sent, run again"))
            return self._write(again, received)

    @staticmethod
    def _explained(request: ChangeRequest, step: Callable[[], Outcome]) -> Outcome:
        """``step``'s outcome, where a request that does not fit the controller is a
        ``bad_request`` outcome and a CLI that cannot be read before anything was sent a
        ``failed`` one (neither is audited: nothing was judged): ``--all`` goes on."""
        try:
            return step()
        except BadRequest as error:
            return Outcome(request, Result.BAD_REQUEST, str(error))
        except SsacliError as error:
            return Outcome(request, Result.FAILED, (
                f"{request.target.describe()}: could not read the controller: {error}: "
                "nothing sent"))

    def _judged(self, request: ChangeRequest, snapshot: Snapshot | None = None) -> Outcome:
        """Under the lock: reconcile the unfinished changes, read the controller (or take it
        from ``snapshot``, read under this hold of the lock) and judge the change. PLANNED,
        with the question where it asks one, when it may go ahead; else finished and
        recorded: refused (an unfinished change to it is still open, or the interlock),
        unchanged, a dry run, or not sent (the log cannot be read)."""
        target, change = request.target, request.change
        try:
            still_open = self.reconcile()
        except AuditError as error:  # what is open cannot be known: nothing is sent
            return self._not_sent(request, error)
        blocking = [c for c in still_open if c.names(target.slot, target.serial)]
        if blocking:
            return self._finish(Outcome(request, Result.REFUSED, ""), Result.REFUSED, (
                f"refused: an earlier change to {target.describe()} never recorded its "
                f"outcome and the controller cannot be read to reconcile it: "
                f"{blocking[0].describe()} in {self.audit.path}; nothing sent (check the "
                "controller with `smartarray-agent status`, which reconciles it once it can "
                "be read)"))
        ctrl = target.find(self._snapshot(READ_COMMAND) if snapshot is None else snapshot)
        change.entry.check(ctrl, change, self.runner)
        charge_error = None if request.without_charge else self.charge.unread(ctrl)
        verdict = judge(ctrl, change, self.threshold_percent, charge_error)
        charge = ctrl.backup_power.charge_percent
        outcome = Outcome(
            request, Result.PLANNED, verdict.message, ctrl=ctrl,
            controller={"slot": ctrl.slot, "model": ctrl.model, "serial": ctrl.serial},
            before=settings(ctrl), command=vendor_command(ctrl, change),
            backup_power=verdict.backup.summary, threshold_percent=verdict.threshold_percent,
            charge_percent=charge, charge_read_at=None if charge is None else _iso(
                self.charge.read_at))
        if not verdict.allowed:
            hint = (" (to go ahead on the CLI's word alone: --without-ilo-charge, or [policy] "
                    "enable_without_ilo_charge = true)"
                    if charge_error is not None and change.adds_cache(ctrl) else "")
            return self._finish(outcome, Result.REFUSED, verdict.message + hint)
        if change.entry.shows(ctrl, change):
            return self._finish(outcome, Result.UNCHANGED, f"{ctrl.name}: {change.describe()} "
                                                           "is already set: nothing sent")
        if request.dry_run:
            return self._finish(outcome, Result.DRY_RUN, f"would run: {_shown(outcome)} "
                                                         f"({verdict.message})")
        if verdict.needs_confirmation and not request.assume_yes:
            warning = change.entry.warning
            outcome.question = (f"{ctrl.name}: {change.describe()} ({verdict.message}). "
                                f"{warning + ' ' if warning else ''}Continue?")
        return outcome

    def _write(self, outcome: Outcome, received: signals.Held) -> Outcome:
        """In the change's session, with signals held: record the intent, send, verify and
        record the outcome. The lock is held from the intent to the outcome: an intent that
        someone else finds open under the lock is a change that was killed
        (write/reconcile.py)."""
        received.arm()  # a signal from here on waits for the outcome to be on record
        if received:  # --all: one arrived while an earlier controller's change was sent
            name = signal.Signals(received[0]).name
            return self._finish(outcome, Result.DECLINED,
                                f"{name} before the command was sent: nothing sent")
        try:
            self._record(outcome, "intent")
        except AuditError as error:
            outcome.result, outcome.message = Result.NOT_SENT, f"{error}: nothing sent"
            outcome.audit = self._unrecorded(error)
            return outcome
        self._send(outcome)
        if received:
            outcome.interrupted = signal.Signals(received[0]).name
            outcome.message += (f" ({outcome.interrupted} arrived while the command ran: "
                                "it was let finish and recorded)")
        return self._finish(outcome, outcome.result, outcome.message)

    def _send(self, outcome: Outcome) -> None:
        """Send the command and read again; set the outcome's result, message and after."""
        request, shown, slot = outcome.request, _shown(outcome), outcome.controller["slot"]
        sent_error: SsacliError | None = None
        try:
            self.runner.run(outcome.command or [])
        except SsacliError as error:
            sent_error = error
        reread = commands.show_config(slot or "")
        try:
            after = request.target.find(self._snapshot(reread))
        except (SsacliError, BadRequest) as error:
            outcome.result = Result.UNKNOWN
            outcome.message = (
                f"sent {shown} to {outcome.name}{f' ({sent_error})' if sent_error else ''}, "
                f"but could not read the controller afterwards: {error}. Outcome unknown: "
                f"check with `smartarray-agent status` (or `{self.runner.cli.name} "
                f"{shlex.join(reread)}`) whether {request.change.describe()} shows")
            return
        outcome.after = settings(after)
        note = f" (the CLI: {sent_error})" if sent_error else ""
        if request.change.entry.shows(after, request.change):
            self._changed(outcome, after, note)
        elif isinstance(sent_error, VendorCommandError):
            outcome.result = Result.FAILED
            outcome.message = f"the CLI refused the change: {sent_error}"
        else:
            outcome.result = Result.NOT_APPLIED
            outcome.message = (f"sent {shown}{note} to {after.name}, but the controller shows "
                               f"{_differences(outcome.before, outcome.after)}")

    def _changed(self, outcome: Outcome, after: Controller, note: str) -> None:
        """A change that shows; says when backup power is no longer healthy."""
        change = outcome.request.change
        outcome.result = Result.CHANGED
        outcome.message = f"{after.name}: {change.describe()}{note}"
        now = copy.deepcopy(outcome.ctrl or after)  # as judged, with power and cache as now
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
        elif change.entry.asks_write_cache(change) and not post.backup.protected:
            outcome.message += (f"; write cache stays inactive until backup power is back "
                                f"({post.backup.summary})")

    def _controllers_of(self, change: UnfinishedChange) -> Snapshot:
        """The controllers as they are now, an unfinished change's among them."""
        slot = change.controller.get("slot")
        return self._snapshot(commands.show_config(slot) if slot else READ_COMMAND)

    def _snapshot(self, command: list[str]) -> Snapshot:
        """The controllers ``command`` shows, with the iLO's charge laid over them."""
        try:
            return self.charge.overlay(parse(self.runner.run(command)))
        except ParseError as error:
            raise BadRequest(f"could not read the controllers: {error}") from None

    def _not_sent(self, request: ChangeRequest, error: AuditError) -> Outcome:
        """The audit file cannot be written: nothing is sent, and the outcome says why."""
        return Outcome(request, Result.NOT_SENT, f"{error}: nothing sent",
                       audit=self._unrecorded(error))

    def _finish(self, outcome: Outcome, result: Result, message: str) -> Outcome:
        """Set the result and record it; a record that cannot be written is said in the
        outcome (nothing more is sent either way)."""
        outcome.result, outcome.message = result, message
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
        outcome.audit = {"outcome": outcome.result if event == "outcome" else "intent",
                         "file": str(self.audit.path)}


def _shown(outcome: Outcome) -> str:
    return shlex.join(outcome.command or [])


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")


def _differences(before: dict | None, after: dict | None) -> str:
    if before is None or after is None:
        return "no readable state"
    changed = {k: after[k] for k in after if after[k] != before.get(k)}
    return f"no change ({after})" if not changed else f"only {changed}"
