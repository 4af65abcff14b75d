"""``set-cache-ratio`` and ``write-cache``: the write path's commands. The write path and
the vendor CLI's runner are imported when a change is made, not when any command starts."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sys
from argparse import Namespace
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.command import Command, Parser
from smartarray_agent.cli.context import (
    CommandContext,
    CommandError,
    add_context_options,
    fail,
)
from smartarray_agent.cli.options import PERCENT
from smartarray_agent.locations import AUDIT_FILE

if TYPE_CHECKING:
    from smartarray_agent.write.change import Outcome, Target
    from smartarray_agent.write.kinds import Change

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")


def add_targeting_options(parser: Parser) -> None:
    """The options both write commands share, which :meth:`Targeting.from_args` reads."""
    parser.add_argument("--slot", metavar="S", help="The controller's slot (as status shows it).")
    parser.add_argument("--serial", metavar="SN", help="The controller's serial number.")
    parser.add_argument("--all", dest="every", action="store_true",
                        help="Every controller with a cache, each judged, written, verified "
                             "and audited on its own.")
    parser.add_argument("--dry-run", action="store_true",
                        help="Print the exact vendor command and the verdict; send nothing "
                             "(audited as dry_run).")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help='Print {"changed": ..., "before": ..., "after": ..., '
                             '"command": [...], "audit": {...}} (with --all: '
                             '{"changed": ..., "results": [...]}).')
    parser.add_argument(
        "--threshold", type=PERCENT, metavar="PCT",
        help="Backup power charge (%%) below which write cache may not be forced on "
             "(default: [policy] battery_threshold_percent, 80).")
    parser.add_argument(
        "--without-ilo-charge", dest="without_charge", action="store_true",
        help="Allow turning write cache on when the configured iLO cannot be read, on the "
             "CLI's word alone (default: [policy] enable_without_ilo_charge, false).")
    parser.add_argument(
        "--audit-file", type=Path, metavar="FILE",
        help=f"Append-only JSON-lines audit log (default: [audit] file, {AUDIT_FILE} for "
             "root).")


@dataclass(frozen=True)
class Targeting:
    """How a write command names its controllers and runs: the options both share."""

    targets: list[Target] | None  # None: --all, every controller with a cache
    dry_run: bool
    as_json: bool
    threshold: float | None
    without_charge: bool
    audit_file: Path | None

    @classmethod
    def from_args(cls, args: Namespace) -> Targeting:
        """The options :func:`add_targeting_options` added; exits 2 unless exactly one of
        --slot, --serial and --all names the controllers."""
        slot: str | None = args.slot
        serial: str | None = args.serial
        if sum((slot is not None, serial is not None, args.every)) != 1:
            raise fail("name the controller with --slot or --serial, or give --all (one of "
                       "them)", exitcodes.BAD_INPUT)
        from smartarray_agent.write.change import Target

        targets = None if args.every else [Target(slot=slot, serial=serial)]
        return cls(targets, args.dry_run, args.as_json, args.threshold, args.without_charge,
                   args.audit_file)


def _ratio_arguments(parser: Parser) -> None:
    parser.add_argument("ratio", metavar="READ/WRITE")
    add_targeting_options(parser)
    add_context_options(parser)


def _set_cache_ratio(args: Namespace) -> None:
    context, targeting = CommandContext.from_args(args), Targeting.from_args(args)
    ratio: str = args.ratio
    match = _RATIO.match(ratio.strip())
    if not match or int(match.group(1)) + int(match.group(2)) != 100:
        raise fail(f"the ratio {ratio!r} is not READ/WRITE integers that sum to 100, "
                   "e.g. 25/75", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import Change, Kind

    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    _run(change, targeting, assume_yes=True, context=context)


set_cache_ratio = Command(
    "Set a controller's read/write cache ratio, READ/WRITE such as 25/75 (idempotent: "
    "nothing is sent when set).",
    _set_cache_ratio, _ratio_arguments)


def _write_cache_arguments(parser: Parser) -> None:
    from smartarray_agent.write.kinds import WHAT

    parser.add_argument("switch", metavar="enable|disable", choices=["enable", "disable"])
    parser.add_argument("logical_drive", metavar="N", nargs="?")
    parser.add_argument("--what", required=True, choices=list(WHAT), metavar="|".join(WHAT),
                        help=", ".join(WHAT))
    parser.add_argument("--usage", choices=["configured", "unconfigured", "hba"],
                        metavar="configured|unconfigured|hba",
                        help="Gen10 drive write cache: which drives.")
    parser.add_argument("-y", "--yes", action="store_true", help="Do not ask for confirmation.")
    add_targeting_options(parser)
    add_context_options(parser)


def _write_cache(args: Namespace) -> None:
    context, targeting = CommandContext.from_args(args), Targeting.from_args(args)
    what: str = args.what
    logical_drive: str | None = args.logical_drive
    usage: str | None = args.usage
    if (what == "logical-drive") != (logical_drive is not None):
        raise fail("give the logical drive number with --what logical-drive, and only then",
                   exitcodes.BAD_INPUT)
    if usage is not None and what != "drive":
        raise fail("--usage goes with --what drive", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import WHAT, Change

    change = Change(WHAT[what], enable=args.switch == "enable", usage=usage,
                    logical_drive=logical_drive)
    _run(change, targeting, assume_yes=args.yes, context=context)


write_cache = Command(
    "Turn no-battery write cache, drive write cache or a logical drive's caching on or off "
    "(N: the logical drive, with --what logical-drive, and only then).\n\n"
    "Turning write cache on asks for confirmation (unless --yes) and is refused while backup "
    "power is below the threshold.",
    _write_cache, _write_cache_arguments)


class _HangUp(Exception):
    pass


def _hang_up(signum: int, frame: object) -> None:
    raise _HangUp


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
    except (EOFError, KeyboardInterrupt, _HangUp):
        print("\nnot confirmed", file=sys.stderr)
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


def _run(change: Change, targeting: Targeting, *, assume_yes: bool,
         context: CommandContext) -> None:
    from smartarray_agent.collectors.ssacli.errors import VendorCommandError
    from smartarray_agent.collectors.ssacli.lock import LockError
    from smartarray_agent.collectors.ssacli.run import CliFailed, CliTimeout
    from smartarray_agent.collectors.ssacli.session import SessionError
    from smartarray_agent.write.audit import AuditLog
    from smartarray_agent.write.change import ChangeRequest, ChangeRunner
    from smartarray_agent.write.kinds import BadRequest

    settings = context.config
    targets, dry_run, as_json = targeting.targets, targeting.dry_run, targeting.as_json
    threshold, audit_file = targeting.threshold, targeting.audit_file
    try:
        runner = context.runner()
    except CommandError as error:
        raise fail(str(error), error.code) from None
    charge = context.read_charge()  # the iLO is slow: never read it while holding the lock
    changer = ChangeRunner(
        runner, AuditLog(audit_file or settings.audit.path),
        threshold if threshold is not None else settings.policy.battery_threshold_percent,
        confirm=_ask, charge=charge,
    )
    without_charge = targeting.without_charge or settings.policy.enable_without_ilo_charge
    try:
        if targets is None:
            outcomes = [changer.apply_or_explain(ChangeRequest(
                target, change, dry_run, assume_yes, without_charge))
                for target in changer.cached_targets()]
        else:
            outcomes = [changer.apply(ChangeRequest(targets[0], change, dry_run, assume_yes,
                                                    without_charge))]
    except BadRequest as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    except (VendorCommandError, CliTimeout, CliFailed, LockError, SessionError,
            OSError) as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    finally:
        runner.close()
    codes = [exit_code(outcome) for outcome in outcomes]
    if as_json:
        report = (outcomes[0].as_json() if targets is not None else
                  {"changed": any(o.changed for o in outcomes),
                   "results": [o.as_json() for o in outcomes]})
        print(json.dumps(report, indent=2))
    for outcome, code in zip(outcomes, codes, strict=True):
        if code != exitcodes.OK:
            print(f"smartarray-agent: {outcome.message}", file=sys.stderr)
        elif not as_json:
            print(outcome.message)
    if targets is None and not outcomes:
        print("smartarray-agent: no controller with a cache: nothing to do", file=sys.stderr)
    failed = [code for code in codes if code != exitcodes.OK]
    if failed:
        raise SystemExit(failed[0])
