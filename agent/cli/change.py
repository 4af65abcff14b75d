"""``set-cache-ratio`` and ``write-cache``: the write path's commands. The write path and
the vendor CLI's runner are imported when a change is made, not when any command starts."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.exceptions import Exit

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import (
    CommandContext,
    CommandError,
    fail,
    with_context,
    with_options,
)
from smartarray_agent.locations import AUDIT_FILE

if TYPE_CHECKING:
    from smartarray_agent.write.change import Outcome, Target
    from smartarray_agent.write.kinds import Change

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")

slot_option = click.option("--slot", metavar="S",
                           help="The controller's slot (as status shows it).")
serial_option = click.option("--serial", metavar="SN", help="The controller's serial number.")
all_option = click.option("--all", "every", is_flag=True,
                          help="Every controller with a cache, each judged, written, verified "
                               "and audited on its own.")
dry_run_option = click.option("--dry-run", is_flag=True,
                              help="Print the exact vendor command and the verdict; send "
                                   "nothing (audited as dry_run).")
json_option = click.option("--json", "as_json", is_flag=True,
                           help='Print {"changed": ..., "before": ..., "after": ..., '
                                '"command": [...], "audit": {...}} (with --all: '
                                '{"changed": ..., "results": [...]}).')
without_charge_option = click.option(
    "--without-ilo-charge", "without_charge", is_flag=True,
    help="Allow turning write cache on when the configured iLO cannot be read, on the CLI's "
         "word alone (default: [policy] enable_without_ilo_charge, false).")
threshold_option = click.option(
    "--threshold", type=click.FloatRange(min=0, max=100), metavar="PCT",
    help="Backup power charge (%) below which write cache may not be forced on (default: "
         "[policy] battery_threshold_percent, 80).")
audit_file_option = click.option(
    "--audit-file", type=click.Path(path_type=Path), metavar="FILE",
    help=f"Append-only JSON-lines audit log (default: [audit] file, {AUDIT_FILE} for root).")


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
    slot_option, serial_option, all_option, dry_run_option, json_option, threshold_option,
    without_charge_option, audit_file_option,
), _targeting)


# --what: the change kind's name in smartarray_agent.write.kinds.Kind
WHAT_KINDS = {"no-battery": "NO_BATTERY_WRITE_CACHE", "drive": "DRIVE_WRITE_CACHE",
              "logical-drive": "LOGICAL_DRIVE_CACHING"}


@click.command("set-cache-ratio")
@with_context
@with_targeting
@click.argument("ratio", metavar="READ/WRITE")
def set_cache_ratio(context: CommandContext, targeting: Targeting, ratio: str) -> None:
    """Set a controller's read/write cache ratio, READ/WRITE such as 25/75 (idempotent:
    nothing is sent when set)."""
    match = _RATIO.match(ratio.strip())
    if not match or int(match.group(1)) + int(match.group(2)) != 100:
        raise fail(f"the ratio {ratio!r} is not READ/WRITE integers that sum to 100, "
                   "e.g. 25/75", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import Change, Kind

    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    _run(change, targeting, assume_yes=True, context=context)


@click.command("write-cache")
@with_context
@with_targeting
@click.argument("switch", metavar="enable|disable", type=click.Choice(["enable", "disable"]))
@click.argument("logical_drive", metavar="[N]", required=False)
@click.option("--what", required=True, type=click.Choice(list(WHAT_KINDS)),
              metavar="no-battery|drive|logical-drive",
              help="no-battery, drive or logical-drive")
@click.option("--usage", type=click.Choice(["configured", "unconfigured", "hba"]),
              metavar="configured|unconfigured|hba",
              help="Gen10 drive write cache: which drives.")
@click.option("--yes", "-y", "yes", is_flag=True, help="Do not ask for confirmation.")
def write_cache(context: CommandContext, targeting: Targeting, switch: str, what: str,
                logical_drive: str | None, usage: str | None, yes: bool) -> None:
    """Turn no-battery write cache, drive write cache or a logical drive's caching on or off
    (N: the logical drive, with --what logical-drive, and only then).

    Turning write cache on asks for confirmation (unless --yes) and is refused while backup
    power is below the threshold."""
    if (what == "logical-drive") != (logical_drive is not None):
        raise fail("give the logical drive number with --what logical-drive, and only then",
                   exitcodes.BAD_INPUT)
    if usage is not None and what != "drive":
        raise fail("--usage goes with --what drive", exitcodes.BAD_INPUT)
    from smartarray_agent.write.kinds import Change, Kind

    change = Change(Kind[WHAT_KINDS[what]], enable=switch == "enable", usage=usage,
                    logical_drive=logical_drive)
    _run(change, targeting, assume_yes=yes, context=context)


class _HangUp(Exception):
    pass


def _hang_up(signum: int, frame: object) -> None:
    raise _HangUp


def _ask(question: str) -> bool:
    """The operator's yes; no on Ctrl-C, end of input or a hang-up (nothing is sent)."""
    if not sys.stdin.isatty():
        click.echo(f"{question} [needs --yes: no terminal to ask on]", err=True)
        return False
    previous = signal.signal(signal.SIGHUP, _hang_up)
    try:
        while True:
            click.echo(f"{question} [y/N]: ", nl=False, err=True)
            answer = _read_line().strip().lower()
            if answer in ("y", "yes", "n", "no", ""):
                return answer in ("y", "yes")
            click.echo("Error: invalid input", err=True)
    except (EOFError, KeyboardInterrupt, _HangUp):
        click.echo("\nnot confirmed", err=True)
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
        click.echo(json.dumps(report, indent=2))
    for outcome, code in zip(outcomes, codes, strict=True):
        if code != exitcodes.OK:
            click.echo(f"smartarray-agent: {outcome.message}", err=True)
        elif not as_json:
            click.echo(outcome.message)
    if targets is None and not outcomes:
        click.echo("smartarray-agent: no controller with a cache: nothing to do", err=True)
    failed = [code for code in codes if code != exitcodes.OK]
    if failed:
        raise Exit(failed[0])
