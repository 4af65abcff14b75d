"""The change kinds, as a table: one :class:`KindEntry` per kind holds its interlock row,
its vendor command, its checks, its description, its confirmation text, its ``write-cache
--what`` name and the settings it shows in the audit record's ``before`` and ``after``. The
command line (:data:`WHAT`) and the audit diff (:func:`settings`) read the table;
tests/test_kinds_table.py holds the Ansible module and the simulator's reading of HPE's
forms to it. docs/cli.md ("Vendor commands") lists each command form and its source."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from smartarray_agent.collectors.ssacli import commands
from smartarray_agent.collectors.ssacli.errors import VendorCommandError
from smartarray_agent.common.model import Controller, LogicalDrive, Snapshot
from smartarray_agent.common.policy import Exposure, Row

if TYPE_CHECKING:
    from smartarray_agent.collectors.ssacli.runner import VendorRunner

# Accepted ratios where the CLI does not answer cacheratio=? (docs/cli.md)
FALLBACK_RATIO_STEP = {"hpacucli": 25, "hpssacli": 5, "ssacli": 5}


class BadRequest(ValueError):
    """The request does not fit the controller: nothing was sent."""


class Kind(StrEnum):
    CACHE_RATIO = "cache-ratio"
    NO_BATTERY_WRITE_CACHE = "no-battery-write-cache"
    DRIVE_WRITE_CACHE = "drive-write-cache"
    LOGICAL_DRIVE_CACHING = "logical-drive-caching"


@dataclass(frozen=True)
class Change:
    kind: Kind
    enable: bool | None = None  # the switches
    read_percent: int | None = None  # the cache ratio
    write_percent: int | None = None
    usage: str | None = None  # Gen10 drive write cache: configured, unconfigured, hba
    logical_drive: str | None = None

    @property
    def entry(self) -> KindEntry:
        return KINDS[self.kind]

    @property
    def row(self) -> Row:
        return self.entry.row

    def adds_cache(self, ctrl: Controller) -> bool:
        """Whether it puts (more) writes in cache; False for a change that takes cache away."""
        return self.entry.adds_cache(ctrl, self)

    def describe(self) -> str:
        """``no-battery write cache on``, ``cache ratio 25/75``."""
        return f"{self.entry.label(self)} {self.entry.value(self)}"

    def requested(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None} | {"kind": str(self.kind)}


@dataclass(frozen=True)
class KindEntry:
    row: Row
    label: Callable[[Change], str]  # what is changed: "no-battery write cache"
    shows: Callable[[Controller, Change], bool | None]  # None: the output does not say
    command: Callable[[str, Controller, Change], list[str]]  # (slot, controller, change)
    warning: str = ""  # the confirmation's extra sentence, for kinds that ask
    # raises BadRequest when the change does not fit the controller; what it returns is unused
    # the runner, in the change's session, may be asked a ``param=?`` query
    check: Callable[[Controller, Change, VendorRunner], object] = lambda ctrl, change, cli: None
    adds_cache: Callable[[Controller, Change], bool] = lambda ctrl, change: bool(change.enable)
    # whether the setting it leaves asks for write cache at all (a ratio with writes, a switch
    # on): with backup power down, that write cache stays inactive
    asks_write_cache: Callable[[Change], bool] = lambda change: bool(change.enable)
    value: Callable[[Change], str] = lambda change: "on" if change.enable else "off"  # 25/75
    what: str | None = None  # its ``write-cache --what`` name; None: a command of its own
    # the settings it changes, as the controller shows them (the audit's before and after)
    settings: Callable[[Controller], dict] = lambda ctrl: {}


# -- cache ratio --------------------------------------------------------------------------
def _ratio_adds_cache(ctrl: Controller, change: Change) -> bool:
    before = ctrl.cache.write_percent
    return before is None or (change.write_percent or 0) > before


def _ratio_shows(ctrl: Controller, change: Change) -> bool | None:
    cache = ctrl.cache
    if cache.read_percent is None:
        return None
    return (cache.read_percent, cache.write_percent) == (change.read_percent,
                                                          change.write_percent)


def _ratio_check(ctrl: Controller, change: Change, runner: VendorRunner) -> None:
    try:
        answer = runner.run(commands.cache_ratio_options(_slot(ctrl)))
    except VendorCommandError:  # no answer: the generation's ratios
        answer = ""
    accepted = commands.ratio_options(answer)
    if not accepted:
        step = FALLBACK_RATIO_STEP.get(runner.cli.name, 5)
        accepted = [(read, 100 - read) for read in range(0, 101, step)]
    if (change.read_percent, change.write_percent) not in accepted:
        shown = ", ".join(f"{r}/{w}" for r, w in accepted)
        raise BadRequest(f"{ctrl.name} does not accept the cache ratio "
                         f"{change.entry.value(change)}; it accepts {shown}")


# -- drive write cache --------------------------------------------------------------------
def _dwc_check(ctrl: Controller, change: Change, runner: VendorRunner) -> None:
    gen10 = ctrl.cache.drive_write_cache_policy is not None
    if gen10 and change.usage is None:
        raise BadRequest(f"{ctrl.name} sets drive write cache per usage: give --usage "
                         "configured, unconfigured or hba")
    if not gen10 and change.usage is not None:
        raise BadRequest(f"{ctrl.name} has one drive write cache switch (no per-usage "
                         f"policies before Gen10): leave out --usage {change.usage}")


def _dwc_shows(ctrl: Controller, change: Change) -> bool | None:
    policy = ctrl.cache.drive_write_cache_policy
    if change.usage is None or policy is None:
        shown = ctrl.cache.drive_write_cache
        return None if shown is None else shown is change.enable
    word = getattr(policy, change.usage)
    return None if word is None else word == ("enable" if change.enable else "disable")


def _dwc_command(slot: str, ctrl: Controller, change: Change) -> list[str]:
    # Turning drive write cache on makes the CLI ask (y/n); the command is only sent after
    # the interlock allowed it and the operator confirmed it, so it carries "forced".
    command = commands.drive_write_cache(slot, bool(change.enable), change.usage)
    return [*command, "forced"] if change.enable else command


# -- logical drive caching ----------------------------------------------------------------
def _logical_drive(ctrl: Controller, drive_id: str | None) -> LogicalDrive:
    for drive in ctrl.logical_drives:
        if drive.drive_id == drive_id:
            return drive
    known = ", ".join(d.drive_id for d in ctrl.logical_drives) or "none"
    raise BadRequest(f"{ctrl.name} has no logical drive {drive_id} (logical drives: {known})")


def _slot(ctrl: Controller) -> str:
    if ctrl.slot is None:
        raise BadRequest(f"{ctrl.name} has no slot; changes need one")
    return ctrl.slot


KINDS: dict[Kind, KindEntry] = {
    Kind.CACHE_RATIO: KindEntry(
        row=Row(Exposure.WITH_NBWC, confirm=False),
        label=lambda change: "cache ratio",
        shows=_ratio_shows,
        command=lambda slot, ctrl, change: commands.cache_ratio(
            slot, change.read_percent or 0, change.write_percent or 0),
        check=_ratio_check,
        adds_cache=_ratio_adds_cache,
        asks_write_cache=lambda change: bool(change.write_percent),
        value=lambda change: f"{change.read_percent}/{change.write_percent}",
        settings=lambda ctrl: {"cache_ratio": (
            f"{ctrl.cache.read_percent}/{ctrl.cache.write_percent}"
            if ctrl.cache.read_percent is not None else None)},
    ),
    Kind.NO_BATTERY_WRITE_CACHE: KindEntry(
        row=Row(Exposure.ALWAYS, confirm=True),
        label=lambda change: "no-battery write cache",
        shows=lambda ctrl, change: (None if ctrl.cache.no_battery_write_cache is None
                                    else ctrl.cache.no_battery_write_cache is change.enable),
        command=lambda slot, ctrl, change: commands.no_battery_write_cache(
            slot, bool(change.enable)),
        warning="The controller will cache writes even when backup power fails; a power cut "
                "then loses the writes it acknowledged.",
        what="no-battery",
        settings=lambda ctrl: {"no_battery_write_cache": ctrl.cache.no_battery_write_cache},
    ),
    Kind.DRIVE_WRITE_CACHE: KindEntry(
        row=Row(Exposure.ALWAYS, confirm=True),
        label=lambda change: "drive write cache" + (f" ({change.usage} drives)"
                                                    if change.usage else ""),
        shows=_dwc_shows,
        command=_dwc_command,
        warning="Drive caches have no backup power at all; a power cut loses the writes "
                "they hold.",
        check=_dwc_check,
        what="drive",
        settings=lambda ctrl: {
            "drive_write_cache": ctrl.cache.drive_write_cache,
            "drive_write_cache_policy": (ctrl.cache.drive_write_cache_policy.model_dump()
                                         if ctrl.cache.drive_write_cache_policy else None)},
    ),
    Kind.LOGICAL_DRIVE_CACHING: KindEntry(
        row=Row(Exposure.WITH_NBWC, confirm=False),
        label=lambda change: f"caching of logical drive {change.logical_drive}",
        shows=lambda ctrl, change: (
            None if (drive := _logical_drive(ctrl, change.logical_drive)).caching is None
            else drive.caching is change.enable),
        command=lambda slot, ctrl, change: commands.logical_drive_caching(
            slot, _logical_drive(ctrl, change.logical_drive).drive_id, bool(change.enable)),
        check=lambda ctrl, change, cli: _logical_drive(ctrl, change.logical_drive),
        what="logical-drive",
        settings=lambda ctrl: {"logical_drive_caching": {
            d.drive_id: d.caching for d in ctrl.logical_drives}},
    ),
}
# write-cache --what NAME -> its kind
WHAT: dict[str, Kind] = {entry.what: kind for kind, entry in KINDS.items() if entry.what}


def vendor_command(ctrl: Controller, change: Change) -> list[str]:
    """The exact argv (after the CLI's name) that makes ``change`` on ``ctrl``."""
    return change.entry.command(_slot(ctrl), ctrl, change)


def settings(ctrl: Controller) -> dict:
    """The settings the write path changes, as the controller shows them: every kind's."""
    return {key: value for entry in KINDS.values()
            for key, value in entry.settings(ctrl).items()}


@dataclass(frozen=True)
class Target:
    """The controller a change is for: by its slot, else by its serial."""

    slot: str | None = None
    serial: str | None = None

    @classmethod
    def of(cls, slot: str | None, serial: str | None) -> Target:
        return cls(slot=slot) if slot is not None else cls(serial=serial)

    def describe(self) -> str:
        return f"slot {self.slot}" if self.slot is not None else f"serial {self.serial}"

    def find(self, snapshot: Snapshot) -> Controller:
        """The one controller of ``snapshot`` it names (BadRequest)."""
        found = [c for c in snapshot.controllers
                 if (self.slot is not None and c.slot == self.slot)
                 or (self.serial is not None and c.serial == self.serial)]
        if not found:
            known = ", ".join(c.name for c in snapshot.controllers) or "none"
            raise BadRequest(f"no controller with {self.describe()} (controllers: {known})")
        if len(found) > 1:
            raise BadRequest(f"{self.describe()} names {len(found)} controllers; use --serial")
        return found[0]
