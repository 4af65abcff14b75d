"""``smartarray-agent set-cache-ratio READ/WRITE``: a controller's read/write cache ratio."""

import re
from typing import Annotated

import typer

from smartarray_agent.cli.change import (
    AuditFile,
    DryRun,
    Every,
    ReportJson,
    Serial,
    Slot,
    Targeting,
    Threshold,
    WithoutCharge,
    run_change,
)
from smartarray_agent.cli.context import CommandContext, usage_error
from smartarray_agent.cli.options import CliPath, ConfigFile, LockFile, Simulate, Timeout
from smartarray_agent.write.kinds import Change, Kind

_RATIO = re.compile(r"^(\d{1,3})/(\d{1,3})$")


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
        raise usage_error(f"{ratio!r} is not READ/WRITE integers that sum to 100, e.g. 25/75",
                          "READ/WRITE")
    change = Change(Kind.CACHE_RATIO, read_percent=int(match.group(1)),
                    write_percent=int(match.group(2)))
    run_change(change, targeting, assume_yes=True, context=context)
