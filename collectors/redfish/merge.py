"""Put the battery charge of a Redfish reading on the controllers of a CLI snapshot.

Redfish does not link a battery to a controller, so the mapping is inferred where the data
leaves one answer (docs/redfish.md, "Which controller a battery belongs to"): 1. one battery
backs every ``ArrayControllers`` member whose ``BackupPowerSourceStatus`` says it is present;
2. such a controller is the CLI's with the same serial number, or where either has none the
same slot; 3. with no controller from the iLO, the battery backs the one CLI controller with
a cache, if there is one; 4. anything else maps nothing, and a notice says why. The worse
word of the CLI's and the iLO's wins (:func:`battery_status`), and the charge counts only
while the reading is at most ``max_age_s`` old on the monotonic clock (:func:`charge_counts`).
"""

from __future__ import annotations

from smartarray_agent.collectors.redfish.resources import ArrayController, Reading
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


def charge_counts(reading: Reading, now: float, max_age_s: float) -> bool:
    """Whether the reading's charge counts at ``now`` (monotonic): it is at most
    ``max_age_s`` old. The one freshness rule of the charge, per controller (here) and per
    battery (metrics.py)."""
    return now - reading.taken_at <= max_age_s


def merge_charge(snapshot: Snapshot, reading: Reading, now: float,
                 max_age_s: float) -> Snapshot:
    """A copy of ``snapshot`` with ``backup_power.charge_percent`` set on the controllers the
    reading's battery backs, and their status where the iLO's word is worse, when the reading
    is fresh. ``snapshot`` is not changed."""
    # Only what changes is copied: a big host's drives are shared, not copied at every render.
    merged = snapshot.model_copy(update={"controllers": list(snapshot.controllers),
                                         "notices": list(snapshot.notices)})
    positions, why = _backed(snapshot, reading, now, max_age_s)
    if why is not None:
        merged.notices.append(f"{NOTICE}{why}")
        return merged
    battery = reading.batteries[0]
    for position in positions:
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
        ctrl.backup_power.charge_percent = battery.charge_percent  # the CLI gives none
    if battery.charge_percent is None:
        said = battery.charge_unreadable
        merged.notices.append(f"{NOTICE}battery {battery.index} reports "
                              + (f"a charge that is not a number 0-100: {said}" if said
                                 else "no charge"))
    return merged


def _backed(snapshot: Snapshot, reading: Reading, now: float,
            max_age_s: float) -> tuple[list[int], str | None]:
    """The positions in ``snapshot.controllers`` the reading's one battery backs (rules
    1-4), or why there are none."""
    if not charge_counts(reading, now, max_age_s):
        return [], (f"charge not used: the reading is {now - reading.taken_at:.0f} s old "
                    f"(max_age_s {max_age_s:g})")
    count = len(reading.batteries)
    if count != 1:
        return [], "charge not mapped: " + (
            f"the iLO reports {count} batteries and Redfish does not say which controller "
            "each one backs" if count else "the iLO reports no battery")
    if not reading.controllers:
        cached = [i for i, c in enumerate(snapshot.controllers) if c.cache.present is True]
        return cached, None if len(cached) == 1 else (
            f"charge not mapped: the iLO lists no controllers and the CLI shows {len(cached)} "
            "controllers with a cache, not one")
    backed = backed_controllers(reading)
    if not backed:
        return [], "charge not mapped: no controller the iLO lists has backup power present"
    matched = [i for i, ctrl in enumerate(snapshot.controllers)
               if any(_same(ctrl, rf) for rf in backed)]
    return matched, None if matched else (
        "charge not mapped: no controller of the CLI matches (by serial or slot) a controller "
        "the iLO lists with backup power")


def _same(ctrl: Controller, rf: ArrayController) -> bool:
    ours, theirs = _serial(ctrl.serial), _serial(rf.serial)
    if ours and theirs:
        return ours == theirs
    return ctrl.slot is not None and rf.slot is not None and ctrl.slot.lower() == rf.slot


def _serial(text: str | None) -> str | None:
    return text.strip().upper() or None if text else None
