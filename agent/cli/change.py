"""The change commands, ``set-cache-ratio`` and ``write-cache`` (whose kinds and ``--what``
names are the write path's table, write/kinds.py), and what they share: the options that name
the controllers and set the interlock, the operator's confirmation, and the run of a change
through the write path, with its exit code and report."""

import json
import os
import re
import select
import signal
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, CommandError, fail, warn
from smartarray_agent.cli.options import (
    CliPath,
    ConfigFile,
    LockFile,
    Simulate,
    Timeout,
    float_range,
)
from smartarray_agent.locations import AUDIT_FILE
from smartarray_agent.write.kinds import WHAT, Change, Kind

if TYPE_CHECKING:
    from smartarray_agent.write.change import Outcome

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")
# The choices of --what: one per kind of the table that has a --what name. mypy cannot
# read members made at run time.
What = StrEnum("What", {name: name for name in WHAT})  # type: ignore[misc]

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
            raise typer.BadParameter("name the controller with --slot or --serial, or give "
                                     "--all (one of them)")


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


def exit_code(outcome: "Outcome") -> int:
    """The outcome's code; an outcome the audit file did not take is OUTCOME_NOT_RECORDED,
    whatever it was (the message says what happened, and syslog has the record)."""
    from smartarray_agent.write.change import Result

    if outcome.audit.get("error") and outcome.result is not Result.NOT_SENT:
        return exitcodes.OUTCOME_NOT_RECORDED
    if outcome.changed and outcome.unprotected:
        return exitcodes.UNPROTECTED
    return {Result.CHANGED: exitcodes.OK, Result.UNCHANGED: exitcodes.OK,
            Result.DRY_RUN: exitcodes.OK, Result.REFUSED: exitcodes.REFUSED,
            Result.DECLINED: exitcodes.DECLINED, Result.NOT_APPLIED: exitcodes.NOT_APPLIED,
            Result.FAILED: exitcodes.VENDOR_ERROR, Result.UNKNOWN: exitcodes.OUTCOME_UNKNOWN,
            Result.NOT_SENT: exitcodes.NOT_RECORDED, Result.BAD_REQUEST: exitcodes.BAD_INPUT,
            }[outcome.result]


def set_cache_ratio(
    ratio: Annotated[str, typer.Argument(
        metavar="READ/WRITE", help="The read and write shares, summing to 100: 25/75.")],
    slot: Slot = None, serial: Serial = None, every: Every = False, dry_run: DryRun = False,
    as_json: ReportJson = False, threshold: Threshold = None,
    without_charge: WithoutCharge = False, audit_file: AuditFile = None,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Set a controller's read/write cache ratio, READ/WRITE such as 25/75 (idempotent:
    nothing is sent when set)."""
    context = CommandContext(config, simulate, cli, timeout, lock_file)
    targeting = Targeting(slot, serial, every, dry_run, as_json, threshold, without_charge,
                          audit_file)
    match = _RATIO.match(ratio.strip())
    if not match or int(match.group(1)) + int(match.group(2)) != 100:
        raise typer.BadParameter(f"{ratio!r} is not READ/WRITE integers that sum to 100, "
                                 "e.g. 25/75", param_hint="READ/WRITE")
    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    run_change(change, targeting, assume_yes=True, context=context)


def write_cache(
    switch: Annotated[Literal["enable", "disable"], typer.Argument(
        metavar="SWITCH", help="Turn it on or off.")],
    what: Annotated[What, typer.Option(
        "--what", help="Which write cache: no-battery write cache, drive write cache, or the "
                       "caching of logical drive N.")],
    logical_drive: Annotated[str | None, typer.Argument(
        metavar="N", help="The logical drive, with --what logical-drive.")] = None,
    usage: Annotated[Literal["configured", "unconfigured", "hba"] | None, typer.Option(
        "--usage", help="Gen10 drive write cache: which drives.")] = None,
    yes: Annotated[bool, typer.Option("-y", "--yes", help="Do not ask for confirmation.")] = False,
    slot: Slot = None, serial: Serial = None, every: Every = False, dry_run: DryRun = False,
    as_json: ReportJson = False, threshold: Threshold = None,
    without_charge: WithoutCharge = False, audit_file: AuditFile = None,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Turn no-battery write cache, drive write cache or a logical drive's caching on or off
    (N: the logical drive, with --what logical-drive, and only then).

    Turning write cache on asks for confirmation (unless --yes) and is refused while backup
    power is below the threshold."""
    context = CommandContext(config, simulate, cli, timeout, lock_file)
    targeting = Targeting(slot, serial, every, dry_run, as_json, threshold, without_charge,
                          audit_file)
    if what == "logical-drive" and logical_drive is None:
        raise typer.BadParameter("--what logical-drive needs the logical drive's number: "
                                 "--what logical-drive N")
    if what != "logical-drive" and logical_drive is not None:
        raise typer.BadParameter(f"got {logical_drive!r}, but only --what logical-drive "
                                 "takes a logical drive number")
    if usage is not None and what != "drive":
        raise typer.BadParameter("--usage goes with --what drive", param_hint="--usage")
    change = Change(WHAT[what], enable=switch == "enable", usage=usage,
                    logical_drive=logical_drive)
    run_change(change, targeting, assume_yes=yes, context=context)


def run_change(change: Change, targeting: Targeting, *, assume_yes: bool,
               context: CommandContext) -> None:
    """Make ``change`` on the targeted controllers, print what happened, and exit with the
    first failing controller's code."""
    from smartarray_agent.collectors.ssacli.errors import SsacliError
    from smartarray_agent.write.audit import AuditLog
    from smartarray_agent.write.change import ChangeRunner
    from smartarray_agent.write.kinds import BadRequest, Target

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
        outcomes = changer.apply(change, None if every else Target(targeting.slot,
                                                                     targeting.serial),
                                 dry_run=dry_run, assume_yes=assume_yes,
                                 without_charge=without_charge)
    except BadRequest as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    except SsacliError as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    finally:
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
