"""What ``set-cache-ratio`` and ``write-cache`` share: the options that name the
controllers and set the interlock, the operator's confirmation, and the run of a change
through the write path, with its exit code and report."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, CommandError, fail, usage_error, warn
from smartarray_agent.cli.options import float_range
from smartarray_agent.locations import AUDIT_FILE

if TYPE_CHECKING:
    from smartarray_agent.write.change import Outcome
    from smartarray_agent.write.kinds import Change

Slot = Annotated[str | None, typer.Option(
    "--slot", metavar="S", help="The controller's slot (as status shows it).")]
Serial = Annotated[str | None, typer.Option(
    "--serial", metavar="SN", help="The controller's serial number.")]
Every = Annotated[bool, typer.Option(
    "--all", help="Every controller with a cache, each judged, written, verified and audited "
                  "on its own, in one vendor CLI session.")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Print the exact vendor command and the verdict; send nothing (audited "
                      "as dry_run).")]
ReportJson = Annotated[bool, typer.Option(
    "--json", help='Print {"changed": ..., "before": ..., "after": ..., "command": [...], '
                   '"audit": {...}} (with --all: {"changed": ..., "results": [...], '
                   '"skipped": [...]}).')]
Threshold = Annotated[float | None, typer.Option(
    "--threshold", parser=float_range(0, 100), metavar="PCT",
    help="Backup power charge (%) below which write cache may not be forced on (default: "
         "[policy] battery_threshold_percent, 80).")]
WithoutCharge = Annotated[bool, typer.Option(
    "--without-ilo-charge",
    help="Allow turning write cache on when the configured iLO cannot be read, on the CLI's "
         "word alone (default: [policy] enable_without_ilo_charge, false).")]
AuditFile = Annotated[Path | None, typer.Option(
    "--audit-file", metavar="FILE",
    help=f"Append-only JSON-lines audit log (default: [audit] file, {AUDIT_FILE} for root).")]


@dataclass(frozen=True)
class Targeting:
    """How a write command names its controllers and runs: the options both share. Exits 2
    unless exactly one of --slot, --serial and --all names the controllers."""

    slot: str | None
    serial: str | None
    every: bool  # --all: every controller with a cache
    dry_run: bool
    as_json: bool
    threshold: float | None
    without_charge: bool
    audit_file: Path | None

    def __post_init__(self) -> None:
        if sum((self.slot is not None, self.serial is not None, self.every)) != 1:
            raise usage_error("name the controller with --slot or --serial, or give --all "
                              "(one of them)")


def _hang_up(signum: int, frame: object) -> None:
    raise EOFError  # the terminal is gone: no more input, as at its end


def _ask(question: str) -> bool:
    """The operator's yes; no on Ctrl-C, end of input or a hang-up (nothing is sent)."""
    if not sys.stdin.isatty():
        print(f"{question} [needs --yes: no terminal to ask on]", file=sys.stderr)
        return False
    previous = signal.signal(signal.SIGHUP, _hang_up)
    try:
        while True:
            print(f"{question} [y/N]: ", end="", file=sys.stderr, flush=True)
            answer = _read_line().strip().lower()
            if answer in ("y", "yes", "n", "no", ""):
                return answer in ("y", "yes")
            print("Error: invalid input", file=sys.stderr)
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)  # end the question's line; the outcome says "not confirmed"
        return False
    finally:
        signal.signal(signal.SIGHUP, previous)


def _read_line() -> str:
    """One line of standard input (EOFError at its end). A signal that arrives before the
    read starts (Ctrl-C, a hang-up) still ends the wait: its byte on the wakeup pipe wakes
    the select, and its handler then raises."""
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    previous = signal.set_wakeup_fd(wake_write)
    try:
        select.select([sys.stdin, wake_read], [], [])
        line = sys.stdin.readline()
    finally:
        signal.set_wakeup_fd(previous)
        os.close(wake_read)
        os.close(wake_write)
    if not line:
        raise EOFError
    return line


EXIT_CODES = {
    "changed": exitcodes.OK, "unchanged": exitcodes.OK, "dry_run": exitcodes.OK,
    "refused": exitcodes.REFUSED, "declined": exitcodes.DECLINED,
    "not_applied": exitcodes.NOT_APPLIED, "failed": exitcodes.VENDOR_ERROR,
    "unknown": exitcodes.OUTCOME_UNKNOWN, "not_sent": exitcodes.NOT_RECORDED,
    "bad_request": exitcodes.BAD_INPUT,
}


def exit_code(outcome: Outcome) -> int:
    """The outcome's code; an outcome the audit file did not take is OUTCOME_NOT_RECORDED,
    whatever it was (the message says what happened, and syslog has the record)."""
    if outcome.audit.get("error") and outcome.verdict != "not_sent":
        return exitcodes.OUTCOME_NOT_RECORDED
    if outcome.changed and outcome.unprotected:
        return exitcodes.UNPROTECTED
    return EXIT_CODES[outcome.verdict]


def run_change(change: Change, targeting: Targeting, *, assume_yes: bool,
               context: CommandContext) -> None:
    """Make ``change`` on the targeted controllers, print what happened, and exit with the
    first failing controller's code."""
    from smartarray_agent.collectors.ssacli.errors import SsacliError
    from smartarray_agent.write.audit import AuditLog
    from smartarray_agent.write.change import ChangeRequest, ChangeRunner, Target
    from smartarray_agent.write.kinds import BadRequest

    settings, every, dry_run = context.config, targeting.every, targeting.dry_run
    try:
        runner = context.runner()
    except CommandError as error:
        raise fail(str(error), error.code) from None
    threshold = targeting.threshold
    changer = ChangeRunner(runner, AuditLog(targeting.audit_file or settings.audit.path),
                           settings.policy.battery_threshold_percent if threshold is None
                           else threshold, confirm=_ask, charge=context.read_charge())
    without_charge = targeting.without_charge or settings.policy.enable_without_ilo_charge
    try:
        if every:
            outcomes = changer.apply_all(change, dry_run=dry_run, assume_yes=assume_yes,
                                         without_charge=without_charge)
        else:
            target = Target(slot=targeting.slot, serial=targeting.serial)
            outcomes = [changer.apply(ChangeRequest(target, change, dry_run, assume_yes,
                                                    without_charge))]
    except BadRequest as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    except SsacliError as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    finally:
        runner.close()
        for message in changer.reconciled:
            warn(message)
    codes = [exit_code(outcome) for outcome in outcomes]
    if targeting.as_json:
        report = (outcomes[0].as_json() if not every else
                  {"changed": any(o.changed for o in outcomes),
                   "results": [o.as_json() for o in outcomes], "skipped": changer.skipped})
        print(json.dumps(report, indent=2))
    for outcome, code in zip(outcomes, codes, strict=True):
        if code != exitcodes.OK:
            print(f"smartarray-agent: {outcome.message}", file=sys.stderr)
        elif not targeting.as_json:
            print(outcome.message)
    if every and not outcomes:
        print("smartarray-agent: no controller with a cache: nothing to do", file=sys.stderr)
    failed = [code for code in codes if code != exitcodes.OK]
    if failed:
        raise SystemExit(failed[0])
