"""``set-cache-ratio`` and ``write-cache``: the write path's commands."""

from __future__ import annotations

import json
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, CommandError, fail, with_context
from smartarray_agent.collectors.ssacli.errors import VendorCommandError
from smartarray_agent.collectors.ssacli.lock import LockTimeout
from smartarray_agent.collectors.ssacli.run import CliFailed, CliTimeout
from smartarray_agent.collectors.ssacli.session import SessionError
from smartarray_agent.policy import Change, Kind
from smartarray_agent.write.audit import AuditLog
from smartarray_agent.write.change import (
    BadRequest,
    ChangeDeclined,
    ChangeFailed,
    ChangeRefused,
    ChangeRequest,
    ChangeRunner,
    NotApplied,
    Outcome,
    Target,
)

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")

SlotOption = Annotated[
    str | None, typer.Option("--slot", help="The controller's slot (as status shows it).")
]
SerialOption = Annotated[
    str | None, typer.Option("--serial", help="The controller's serial number.")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the vendor command and the verdict; change "
                                         "nothing.")
]
JsonOption = Annotated[
    bool, typer.Option("--json", help='Print {"changed": ..., "before": ..., "after": ...}.')
]
YesOption = Annotated[
    bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--threshold", min=0, max=100,
                 help="Backup power charge (%) below which write cache may not be forced on "
                      "(default: [policy] battery_threshold_percent, 80)."),
]
AuditFileOption = Annotated[
    Path | None,
    typer.Option("--audit-file", help="Append-only JSON-lines audit log (default: [audit] "
                                      "file, /var/lib/smartarray-agent/audit.jsonl for root)."),
]


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
def set_cache_ratio(
    context: CommandContext,
    ratio: Annotated[str, typer.Argument(metavar="READ/WRITE", help="e.g. 25/75")],
    slot: SlotOption = None,
    serial: SerialOption = None,
    dry_run: DryRunOption = False,
    as_json: JsonOption = False,
    threshold: ThresholdOption = None,
    audit_file: AuditFileOption = None,
) -> None:
    """Set a controller's read/write cache ratio (idempotent: nothing is sent when set)."""
    match = _RATIO.match(ratio.strip())
    if not match or int(match.group(1)) + int(match.group(2)) != 100:
        raise fail(f"the ratio {ratio!r} is not READ/WRITE integers that sum to 100, "
                   "e.g. 25/75", exitcodes.BAD_INPUT)
    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    _run(change, _target(slot, serial), dry_run=dry_run, assume_yes=True, as_json=as_json,
         threshold=threshold, audit_file=audit_file,
         context=context)


@with_context
def write_cache(
    context: CommandContext,
    switch: Annotated[Switch, typer.Argument(help="enable or disable")],
    what: Annotated[What, typer.Option("--what", help="no-battery, drive or logical-drive")],
    logical_drive: Annotated[
        str | None, typer.Argument(metavar="[N]", help="The logical drive, with --what "
                                                       "logical-drive.")
    ] = None,
    usage: Annotated[
        Usage | None, typer.Option("--usage", help="Gen10 drive write cache: which drives.")
    ] = None,
    slot: SlotOption = None,
    serial: SerialOption = None,
    yes: YesOption = False,
    dry_run: DryRunOption = False,
    as_json: JsonOption = False,
    threshold: ThresholdOption = None,
    audit_file: AuditFileOption = None,
) -> None:
    """Turn no-battery write cache, drive write cache or a logical drive's caching on or off.

    Turning write cache on asks for confirmation (unless --yes) and is refused while backup
    power is below the threshold."""
    if (what is What.logical_drive) != (logical_drive is not None):
        raise fail("give the logical drive number with --what logical-drive, and only then",
                   exitcodes.BAD_INPUT)
    if usage is not None and what is not What.drive:
        raise fail("--usage goes with --what drive", exitcodes.BAD_INPUT)
    kind = {What.no_battery: Kind.NO_BATTERY_WRITE_CACHE, What.drive: Kind.DRIVE_WRITE_CACHE,
            What.logical_drive: Kind.LOGICAL_DRIVE_CACHING}[what]
    change = Change(kind, enable=switch is Switch.enable,
                    usage=str(usage) if usage else None, logical_drive=logical_drive)
    _run(change, _target(slot, serial), dry_run=dry_run, assume_yes=yes, as_json=as_json,
         threshold=threshold, audit_file=audit_file,
         context=context)


def _target(slot: str | None, serial: str | None) -> Target:
    if (slot is None) == (serial is None):
        raise fail("name the controller with --slot or --serial (one of them)",
                   exitcodes.BAD_INPUT)
    return Target(slot=slot, serial=serial)


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        typer.echo(f"{question} [needs --yes: no terminal to ask on]", err=True)
        return False
    return typer.confirm(question, default=False, err=True)


def _run(change: Change, target: Target, *, dry_run: bool, assume_yes: bool, as_json: bool,
         threshold: float | None, audit_file: Path | None, context: CommandContext) -> None:
    settings = context.config
    try:
        runner = context.runner()
    except CommandError as error:
        raise fail(str(error), error.code) from None
    charge = context.read_charge()  # the iLO is slow: never read it while holding the lock
    changer = ChangeRunner(
        runner, AuditLog(audit_file or settings.audit.path),
        threshold if threshold is not None else settings.policy.battery_threshold_percent,
        confirm=_ask, enrich=charge.overlay,
    )
    request = ChangeRequest(target, change, dry_run=dry_run, assume_yes=assume_yes)
    try:
        outcome = changer.apply(request)
    except ChangeFailed as error:
        _report(error.outcome, as_json, err=True)
        raise typer.Exit(_exit_code(error)) from None
    except BadRequest as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    except (VendorCommandError, CliTimeout, CliFailed, LockTimeout, SessionError,
            OSError) as error:
        raise fail(str(error), exitcodes.VENDOR_ERROR) from None
    finally:
        runner.close()
    _report(outcome, as_json, err=False)


def _exit_code(error: ChangeFailed) -> int:
    if isinstance(error, ChangeRefused):
        return exitcodes.REFUSED
    if isinstance(error, ChangeDeclined):
        return exitcodes.DECLINED
    if isinstance(error, NotApplied):
        return exitcodes.NOT_APPLIED
    return exitcodes.VENDOR_ERROR


def _report(outcome: Outcome, as_json: bool, *, err: bool) -> None:
    if as_json:
        typer.echo(json.dumps(outcome.as_json(), indent=2))
        if err:
            typer.echo(f"smartarray-agent: {outcome.message}", err=True)
        return
    prefix = "smartarray-agent: " if err else ""
    typer.echo(f"{prefix}{outcome.message}", err=err)
