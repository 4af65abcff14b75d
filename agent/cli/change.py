"""``set-cache-ratio`` and ``write-cache``: the write path's commands. The write path and
the vendor CLI's runner are imported when a change is made, not when any command starts."""

from __future__ import annotations

import json
import re
import signal
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import (
    CommandContext,
    CommandError,
    fail,
    with_context,
    with_options,
)

if TYPE_CHECKING:
    from smartarray_agent.write.change import Outcome, Target
    from smartarray_agent.write.kinds import Change

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")

SlotOption = Annotated[
    str | None, typer.Option("--slot", help="The controller's slot (as status shows it).")
]
SerialOption = Annotated[
    str | None, typer.Option("--serial", help="The controller's serial number.")
]
AllOption = Annotated[
    bool, typer.Option("--all", help="Every controller with a cache, each judged, written, "
                                     "verified and audited on its own.")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the exact vendor command and the verdict; "
                                         "send nothing (audited as dry_run).")
]
JsonOption = Annotated[
    bool, typer.Option("--json", help='Print {"changed": ..., "before": ..., "after": ..., '
                                      '"command": [...], "audit": {...}} (with --all: '
                                      '{"changed": ..., "results": [...]}).')
]
WithoutChargeOption = Annotated[
    bool, typer.Option("--without-ilo-charge",
                       help="Allow turning write cache on when the configured iLO cannot be "
                            "read, on the CLI's word alone (default: [policy] "
                            "enable_without_ilo_charge, false).")
]
YesOption = Annotated[
    bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--threshold", min=0, max=100, metavar="PCT",
                 help="Backup power charge (%) below which write cache may not be forced on "
                      "(default: [policy] battery_threshold_percent, 80)."),
]
AuditFileOption = Annotated[
    Path | None,
    typer.Option("--audit-file", metavar="FILE",
                 help="Append-only JSON-lines audit log (default: [audit] file, "
                      "/var/lib/smartarray-agent/audit.jsonl for root)."),
]


@dataclass(frozen=True)
class Targeting:
    """How a write command names its controllers and runs: the options both share."""

    targets: list[Target] | None  # None: --all, every controller with a cache
    dry_run: bool
    as_json: bool
    threshold: float | None
    without_charge: bool
    audit_file: Path | None


def _targeting(slot: str | None, serial: str | None, every: bool, dry_run: bool,
               as_json: bool, threshold: float | None, without_charge: bool,
               audit_file: Path | None) -> Targeting:
    if sum((slot is not None, serial is not None, every)) != 1:
        raise fail("name the controller with --slot or --serial, or give --all (one of them)",
                   exitcodes.BAD_INPUT)
    from smartarray_agent.write.change import Target

    targets = None if every else [Target(slot=slot, serial=serial)]
    return Targeting(targets, dry_run, as_json, threshold, without_charge, audit_file)


with_targeting = with_options("targeting", (
    ("slot", SlotOption),
    ("serial", SerialOption),
    ("every", AllOption),
    ("dry_run", DryRunOption),
    ("as_json", JsonOption),
    ("threshold", ThresholdOption),
    ("without_charge", WithoutChargeOption),
    ("audit_file", AuditFileOption),
), _targeting)


class Switch(StrEnum):
    enable = "enable"
    disable = "disable"


class What(StrEnum):
    no_battery = "no-battery"
    drive = "drive"
    logical_drive = "logical-drive"


class Usage(StrEnum):
    configured = "configured"
    unconfigured = "unconfigured"
    hba = "hba"


@with_context
@with_targeting
def set_cache_ratio(
    context: CommandContext,
    targeting: Targeting,
    ratio: Annotated[str, typer.Argument(metavar="READ/WRITE", help="e.g. 25/75")],
) -> None:
    """Set a controller's read/write cache ratio (idempotent: nothing is sent when set)."""
    match = _RATIO.match(ratio.strip())
    if not match or int(match.group(1)) + int(match.group(2)) != 100:
        raise fail(f"the ratio {ratio!r} is not READ/WRITE integers that sum to 100, "
                   "e.g. 25/75", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import Change, Kind

    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    _run(change, targeting, assume_yes=True, context=context)


@with_context
@with_targeting
def write_cache(
    context: CommandContext,
    targeting: Targeting,
    switch: Annotated[Switch, typer.Argument(metavar="enable|disable",
                                             help="enable or disable")],
    what: Annotated[What, typer.Option("--what", help="no-battery, drive or logical-drive")],
    logical_drive: Annotated[
        str | None, typer.Argument(metavar="N", help="The logical drive, with --what "
                                                     "logical-drive.")
    ] = None,
    usage: Annotated[
        Usage | None, typer.Option("--usage", help="Gen10 drive write cache: which drives.")
    ] = None,
    yes: YesOption = False,
) -> None:
    """Turn no-battery write cache, drive write cache or a logical drive's caching on or off.

    Turning write cache on asks for confirmation (unless --yes) and is refused while backup
    power is below the threshold."""
    if (what is What.logical_drive) != (logical_drive is not None):
        raise fail("give the logical drive number with --what logical-drive, and only then",
                   exitcodes.BAD_INPUT)
    if usage is not None and what is not What.drive:
        raise fail("--usage goes with --what drive", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import Change, Kind

    kind = {What.no_battery: Kind.NO_BATTERY_WRITE_CACHE, What.drive: Kind.DRIVE_WRITE_CACHE,
            What.logical_drive: Kind.LOGICAL_DRIVE_CACHING}[what]
    change = Change(kind, enable=switch is Switch.enable,
                    usage=str(usage) if usage else None, logical_drive=logical_drive)
    _run(change, targeting, assume_yes=yes, context=context)


class _HangUp(Exception):
    pass


def _hang_up(signum: int, frame: object) -> None:
    raise _HangUp


def _ask(question: str) -> bool:
    """The operator's yes; no on Ctrl-C, end of input or a hang-up (nothing is sent)."""
    if not sys.stdin.isatty():
        typer.echo(f"{question} [needs --yes: no terminal to ask on]", err=True)
        return False
    previous = signal.signal(signal.SIGHUP, _hang_up)
    try:
        return typer.confirm(question, default=False, err=True)
    except (typer.Abort, EOFError, KeyboardInterrupt, _HangUp):
        typer.echo("\nnot confirmed", err=True)
        return False
    finally:
        signal.signal(signal.SIGHUP, previous)


EXIT_CODES = {
    "changed": exitcodes.OK, "unchanged": exitcodes.OK, "dry_run": exitcodes.OK,
    "refused": exitcodes.REFUSED, "declined": exitcodes.DECLINED,
    "not_applied": exitcodes.NOT_APPLIED, "failed": exitcodes.VENDOR_ERROR,
    "unknown": exitcodes.OUTCOME_UNKNOWN, "not_sent": exitcodes.NOT_RECORDED,
    "bad_request": exitcodes.BAD_INPUT,
}


def exit_code(outcome: Outcome) -> int:
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
        typer.echo(json.dumps(report, indent=2))
    for outcome, code in zip(outcomes, codes, strict=True):
        if code != exitcodes.OK:
            typer.echo(f"smartarray-agent: {outcome.message}", err=True)
        elif not as_json:
            typer.echo(outcome.message)
    if targets is None and not outcomes:
        typer.echo("smartarray-agent: no controller with a cache: nothing to do", err=True)
    failed = [code for code in codes if code != exitcodes.OK]
    if failed:
        raise typer.Exit(failed[0])
