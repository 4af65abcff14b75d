"""The Nagios/Icinga plugin's judgement: a snapshot in, one status line and perfdata out
(docs/cli.md, ``check``); drive classes as common/model.py's, which the alerts use too."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from smartarray_agent.common.model import (
    LOGICAL_DRIVE_STATES,
    PHYSICAL_DRIVE_STATES,
    Controller,
    LogicalDrive,
    PhysicalDrive,
    Snapshot,
    drive_class,
)
from smartarray_agent.common.policy import unprotected_write_cache, write_cache_active
from smartarray_agent.moving import notes

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
LABELS = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}
_HEALTHY_CACHE = (None, "ok", "not_configured")
# the code each drive class raises; ok, progressing and no printed status raise nothing
DRIVE_CODES = {"failed": CRITICAL, "degraded": WARNING, "rebuilding": WARNING,
               "unknown": WARNING}


class RangeError(ValueError):
    pass


@dataclass(frozen=True)
class Range:
    """A range of the monitoring plugins' guidelines, ``[@]start:end`` (docs/cli.md): a bare
    ``N`` is ``N:`` here, since a charge is good when high; every number a percentage."""

    start: float | None  # None: ~, no lower end
    end: float | None = None  # None: no upper end
    inside: bool = False  # "@": alert inside the range rather than outside

    @classmethod
    def parse(cls, text: str) -> Range:
        body = text.strip()
        inside = body.startswith("@")
        body = body.removeprefix("@")
        if not body:
            raise RangeError(f"{text!r} is empty: give a range such as 90, 90:, ~:90, 10:90 "
                             "or @10:20")
        start_text, colon, end_text = body.partition(":")
        if start_text in ("", "~") and not end_text:  # ":", "~", "~:"
            raise RangeError(f"{text!r} has no number: give a range such as 90, 90:, ~:90, "
                             "10:90 or @10:20")
        if colon and not start_text:
            start_text = "0"  # the guidelines' ":N" is "0:N"
        start = None if start_text == "~" else _percent(text, start_text)
        end = _percent(text, end_text) if end_text else None
        if start is not None and end is not None and start > end:
            raise RangeError(f"{text!r}: its start {start:g} is above its end {end:g}")
        return cls(start, end, inside)

    def alerts(self, value: float) -> bool:
        within = ((self.start is None or value >= self.start)
                  and (self.end is None or value <= self.end))
        return within is self.inside

    @property
    def floor(self) -> float | None:
        """N, when this range alerts below N and nowhere else (``N``, ``N:``)."""
        return self.start if self.end is None and not self.inside else None

    def __str__(self) -> str:
        """As perfdata carries it: never a bare number, which its readers take for ``0:N``."""
        start = "~" if self.start is None else f"{self.start:g}"
        end = "" if self.end is None else f"{self.end:g}"
        return f"{'@' if self.inside else ''}{start}:{end}"


def _percent(text: str, number: str) -> float:
    where = "" if number == text else f"{text!r}: "
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise RangeError(f"{where}{number!r} is not a number")
    if not 0 <= value <= 100:
        raise RangeError(f"{where}{value:g} is not a charge percentage (0 to 100)")
    return value


@dataclass(frozen=True)
class Thresholds:
    charge_warning: Range = Range(90.0)
    charge_critical: Range = Range(80.0)
    # Write cache on backup power below this charge is unprotected, as the interlock has it.
    protected_percent: float = 80.0


def thresholds(warning: Range, critical: Range, interlock_percent: float) -> Thresholds:
    """Protected write cache is the critical range's N when it is "below N" (``N``, ``N:``),
    else ``interlock_percent``."""
    floor = critical.floor
    return Thresholds(warning, critical, interlock_percent if floor is None else floor)


@dataclass
class CheckResult:
    code: int = OK
    problems: list[str] = field(default_factory=list)
    perfdata: list[str] = field(default_factory=list)

    def raise_to(self, code: int, problem: str) -> None:
        self.code = max(self.code, code)
        self.problems.append(problem)

    def line(self, summary: str) -> str:
        text = "; ".join(self.problems) if self.problems else summary
        perf = " ".join(self.perfdata)
        return f"SMARTARRAY {LABELS[self.code]} - {text}" + (f" | {perf}" if perf else "")


def judge(snapshot: Snapshot, thresholds: Thresholds) -> CheckResult:
    result = CheckResult()
    if not snapshot.controllers:
        result.raise_to(UNKNOWN, "no Smart Array controller found")
        return result
    for ctrl in snapshot.controllers:
        _controller(ctrl, thresholds, result)
    return result


def summary(snapshot: Snapshot) -> str:
    """The OK line: the counts, and the drives that move or wear without a problem."""
    drives = sum(len(c.physical_drives) for c in snapshot.controllers)
    text = f"{len(snapshot.controllers)} controller(s) ok, {drives} physical drive(s) ok"
    moving = [f"{_name(ctrl)} {note}" for ctrl in snapshot.controllers for note in notes(ctrl)
              if DRIVE_CODES.get(note.drive_class or "ok", OK) == OK]
    return "; ".join([text, *moving])


def _name(ctrl: Controller) -> str:
    return f"slot {ctrl.slot}" if ctrl.slot is not None else ctrl.model


def _controller(ctrl: Controller, limits: Thresholds, result: CheckResult) -> None:
    name = _name(ctrl)
    power, cache = ctrl.backup_power, ctrl.cache
    if ctrl.status not in (None, "ok"):
        result.raise_to(CRITICAL, f"{name} controller {ctrl.status}")
    if power.status == "recharging":
        result.raise_to(WARNING, f"{name} backup power recharging")
    elif power.status not in (None, "ok"):
        result.raise_to(CRITICAL, f"{name} backup power {power.status}")
    if power.charge_percent is not None:
        if limits.charge_critical.alerts(power.charge_percent):
            result.raise_to(CRITICAL, f"{name} backup power charge {power.charge_percent:g}%")
        elif limits.charge_warning.alerts(power.charge_percent):
            result.raise_to(WARNING, f"{name} backup power charge {power.charge_percent:g}%")
    if cache.status not in _HEALTHY_CACHE:
        result.raise_to(WARNING, f"{name} cache {cache.status}")
    unprotected = unprotected_write_cache(ctrl, limits.protected_percent)
    if unprotected:
        result.raise_to(CRITICAL, f"{name} write cache unprotected: {'; '.join(unprotected)}")
    for ld in ctrl.logical_drives:
        _drive(result, f"{name} logical drive", ld, LOGICAL_DRIVE_STATES)
    for pd in ctrl.physical_drives:
        _drive(result, f"{name} physical drive", pd, PHYSICAL_DRIVE_STATES)
    _perfdata(ctrl, name, limits, result)


def drive_code(states: dict[str, str], word: str | None) -> int:
    return DRIVE_CODES.get(drive_class(states, word) or "ok", OK)


def _drive(result: CheckResult, what: str, drive: LogicalDrive | PhysicalDrive,
           states: dict[str, str]) -> None:
    code = drive_code(states, drive.status)
    if code == OK:
        return
    state = drive.status if drive.status in states else f"in unknown state {drive.status!r}"
    progress = f" {drive.progress_percent:g}%" if drive.progress_percent is not None else ""
    result.raise_to(code, f"{what} {drive.drive_id} {state}{progress}")


def _perfdata(ctrl: Controller, name: str, limits: Thresholds, result: CheckResult) -> None:
    label = name.replace(" ", "")
    power, cache = ctrl.backup_power, ctrl.cache
    if power.charge_percent is not None:
        result.perfdata.append(f"'{label}_charge'={power.charge_percent:g}%;"
                               f"{limits.charge_warning};{limits.charge_critical};0;100")
    if cache.write_percent is not None:
        result.perfdata.append(f"'{label}_cache_write'={cache.write_percent}%;;;0;100")
    active = write_cache_active(ctrl)
    if active is not None:
        result.perfdata.append(f"'{label}_write_cache_active'={int(active)};;;0;1")
    failed = sum(1 for d in ctrl.physical_drives
                 if drive_code(PHYSICAL_DRIVE_STATES, d.status) != OK)
    result.perfdata.append(f"'{label}_physical_drives_not_ok'={failed};;0;0")  # crit above 0
