"""The drives that are not plainly ok, a phrase each, for ``status`` and ``check``: what moves
(with its progress), what broke, and an SSD with less than ``WEAR_NOTED_BELOW_PERCENT`` of
its endurance left."""

from __future__ import annotations

from dataclasses import dataclass

from smartarray_agent.common.model import (
    LOGICAL_DRIVE_STATES,
    PHYSICAL_DRIVE_STATES,
    Controller,
    LogicalDrive,
    PhysicalDrive,
    drive_class,
)

WEAR_NOTED_BELOW_PERCENT = 20.0


@dataclass(frozen=True)
class Note:
    drive: str  # "logical drive 1", "physical drive 1I:1:3"
    what: str  # "recovering 54.73%", "failed (Timeout)", "SSD 3% usage remaining"
    drive_class: str | None  # the state's class: ok, progressing, rebuilding, degraded, ...

    def __str__(self) -> str:
        return f"{self.drive} {self.what}"


def notes(ctrl: Controller) -> list[Note]:
    found = [note for ld in ctrl.logical_drives
             if (note := _note(f"logical drive {ld.drive_id}", ld, LOGICAL_DRIVE_STATES))]
    found += [note for pd in ctrl.physical_drives
              if (note := _note(f"physical drive {pd.drive_id}", pd, PHYSICAL_DRIVE_STATES))]
    return found


def _note(name: str, drive: LogicalDrive | PhysicalDrive, states: dict[str, str]) -> Note | None:
    words = []
    kind = drive_class(states, drive.status)
    if drive.status is None:
        words.append("status not printed")
    elif drive.status != "ok" or drive.progress_percent is not None:
        words.append(drive.status.replace("_", " ") if kind != "unknown"
                     else f"in unknown state {drive.status!r}")
        if drive.progress_percent is not None:
            words[-1] += f" {drive.progress_percent:g}%"
    if isinstance(drive, PhysicalDrive):
        if drive.failure_reason and drive.status != "ok":
            words[-1] += f" ({drive.failure_reason})"
        wear = drive.usage_remaining_percent
        if wear is not None and wear < WEAR_NOTED_BELOW_PERCENT:
            words.append(f"SSD {wear:g}% usage remaining")
    return Note(name, ", ".join(words), kind) if words else None
