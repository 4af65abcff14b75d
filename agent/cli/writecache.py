"""``smartarray-agent write-cache enable|disable --what KIND``: the write-cache switches.
The kinds and their ``--what`` names are the write path's table (write/kinds.py)."""

from enum import StrEnum
from typing import Annotated, Literal

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
from smartarray_agent.write.kinds import WHAT, Change

# The choices of --what: one per kind of the table that has a --what name. mypy cannot
# read members made at run time.
What = StrEnum("What", {name: name for name in WHAT})  # type: ignore[misc]


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
        raise usage_error("--what logical-drive needs the logical drive's number: "
                          "--what logical-drive N")
    if what != "logical-drive" and logical_drive is not None:
        raise usage_error(f"got {logical_drive!r}, but only --what logical-drive takes a "
                          "logical drive number")
    if usage is not None and what != "drive":
        raise usage_error("--usage goes with --what drive", "--usage")
    change = Change(WHAT[what], enable=switch == "enable", usage=usage,
                    logical_drive=logical_drive)
    run_change(change, targeting, assume_yes=yes, context=context)
