"""Put the battery charge of a Redfish reading on the controllers of a CLI snapshot.

Redfish does not link a battery to a controller, so the mapping is inferred, and only where
the data leaves one answer:

1. One battery, controllers listed: HPE's Smart Storage Battery is shared by the server's
   Smart Array controllers, so the single battery maps to every ``ArrayControllers`` member
   whose ``BackupPowerSourceStatus`` says it is present (``Present``, ``PresentAndCharged``
   or ``PresentAndCharging``, HPE's iLO 5 resource definitions).
2. Such a Redfish controller is the CLI controller with the same serial number (spaces
   trimmed, case ignored); where either side has no serial, the one with the same slot
   (``Location: "Slot 0"`` = ``slot 0``). Two different serials never match.
3. One battery, no controller data from the iLO: the battery maps to the only CLI controller
   with a cache board present, if there is exactly one.
4. Anything else (two or more batteries, no battery, no match) maps nothing.

A battery maps its charge only when it reports one (iLO 4 does not), and the reading only
counts while it is at most ``max_age_s`` old. The worse of the two words wins: a mapped
battery whose health is not ``OK`` (``Critical`` is ``failed``, :func:`battery_status`, the
same word the iLO-only snapshot gives) and a controller the iLO reports
``PresentAndCharging`` (``recharging``) set the controller's backup power status, whatever
the CLI printed. Where nothing is mapped, ``charge_percent`` stays None and the snapshot gets
a notice that says why; the write path then counts the iLO as unread for that controller
(``Charge.unread``), and the metrics show no charge.
"""

from __future__ import annotations

from dataclasses import dataclass

from smartarray_agent.collectors.redfish.resources import ArrayController, Battery, Reading
from smartarray_agent.common.model import Controller, Snapshot

NOTICE = "redfish: "
PRESENT = ("present", "present_and_charged", "present_and_charging")  # BackupPowerSourceStatus
CHARGING = "present_and_charging"
# HPE's battery Health -> the CLI's backup power status word, where they differ: a
# Critical Smart Storage Battery is the one the CLI prints as "Failed (Replace Batteries)"
_HEALTH_STATUS = {"critical": "failed"}


def battery_status(health: str | None, charging: bool) -> str | None:
    """The backup power status a Smart Storage Battery's ``Status.Health`` (normalised) and
    its controller's ``PresentAndCharging`` say, in the CLI's words: ``recharging``, ``ok``,
    ``failed`` for ``Critical``, the health word for any other; None when the iLO says
    nothing. Every reader of an iLO battery judges it through this."""
    if charging:
        return "recharging"
    return None if health is None else _HEALTH_STATUS.get(health, health)


def backed_controllers(reading: Reading) -> list[ArrayController]:
    """The Redfish controllers the reading's battery backs (rule 1); [] for any other count
    of batteries."""
    if len(reading.batteries) != 1:
        return []
    return [c for c in reading.controllers if c.backup_power in PRESENT]


@dataclass(frozen=True)
class Assignment:
    """The battery, the positions in ``snapshot.controllers`` it backs, and, when it backs
    none, why."""

    battery: Battery | None
    controllers: tuple[int, ...]
    reason: str | None = None


def assign(snapshot: Snapshot, reading: Reading) -> Assignment:
    """Which CLI controllers the reading's battery backs (rules 1-4)."""
    if not reading.batteries:
        return Assignment(None, (), "the iLO reports no battery")
    if len(reading.batteries) > 1:
        return Assignment(None, (), f"the iLO reports {len(reading.batteries)} batteries and "
                                    f"Redfish does not say which controller each one backs")
    battery = reading.batteries[0]
    if not reading.controllers:
        cached = tuple(i for i, c in enumerate(snapshot.controllers) if c.cache.present is True)
        if len(cached) == 1:
            return Assignment(battery, cached)
        return Assignment(battery, (), f"the iLO lists no controllers and the CLI shows "
                                       f"{len(cached)} controllers with a cache, not one")
    backed = backed_controllers(reading)
    if not backed:
        return Assignment(battery, (), "no controller the iLO lists has backup power present")
    matched = tuple(
        i for i, ctrl in enumerate(snapshot.controllers) if any(_same(ctrl, rf) for rf in backed)
    )
    if not matched:
        return Assignment(battery, (), "no controller of the CLI matches (by serial or slot) "
                                       "a controller the iLO lists with backup power")
    return Assignment(battery, matched)


def charge_counts(reading: Reading, now: float, max_age_s: float) -> bool:
    """Whether the reading's charge counts at ``now``: it is at most ``max_age_s`` old. The
    one freshness rule of the charge, per controller (here) and per battery (metrics.py)."""
    return now - reading.taken_at <= max_age_s


def merge_charge(
    snapshot: Snapshot, reading: Reading, now: float, max_age_s: float
) -> Snapshot:
    """A copy of ``snapshot`` with ``backup_power.charge_percent`` set on the controllers the
    reading's battery backs, and their status where the iLO's word is worse, when the reading
    is fresh. ``snapshot`` is not changed."""
    # Only what changes is copied: a big host's drives are shared, not copied at every render.
    merged = snapshot.model_copy(update={"controllers": list(snapshot.controllers),
                                         "notices": list(snapshot.notices)})
    if not charge_counts(reading, now, max_age_s):
        age = now - reading.taken_at
        merged.notices.append(f"{NOTICE}charge not used: the reading is {age:.0f} s old "
                              f"(max_age_s {max_age_s:g})")
        return merged
    found = assign(snapshot, reading)
    if found.reason is not None or found.battery is None:
        merged.notices.append(f"{NOTICE}charge not mapped: {found.reason}")
        return merged
    battery = found.battery
    for position in found.controllers:
        ctrl = merged.controllers[position] = snapshot.controllers[position].model_copy(
            update={"backup_power": snapshot.controllers[position].backup_power.model_copy()})
        charging = any(rf.backup_power == CHARGING and _same(ctrl, rf)
                       for rf in reading.controllers)
        status = battery_status(battery.health, charging)
        if status not in (None, "ok"):
            ctrl.backup_power.status = status
            ctrl.backup_power.status_text = ("PresentAndCharging" if charging
                                             else f"iLO: {battery.health}")
            merged.notices.append(
                f"{NOTICE}{ctrl.name}: the iLO reports its backup power "
                + ("charging (PresentAndCharging)" if charging else
                   f"{status} (battery {battery.index} health {battery.health})"))
        if battery.charge_percent is not None:
            ctrl.backup_power.charge_percent = battery.charge_percent
    if battery.charge_percent is None:
        said = battery.charge_unreadable
        merged.notices.append(f"{NOTICE}battery {battery.index} reports "
                              + (f"a charge that is not a number 0-100: {said}" if said
                                 else "no charge"))
    return merged


def _same(ctrl: Controller, rf: ArrayController) -> bool:
    ours, theirs = _serial(ctrl.serial), _serial(rf.serial)
    if ours and theirs:
        return ours == theirs
    return ctrl.slot is not None and rf.slot is not None and ctrl.slot.lower() == rf.slot


def _serial(text: str | None) -> str | None:
    return text.strip().upper() or None if text else None
