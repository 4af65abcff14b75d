"""A simulator scenario as the simulated iLO serves it in iLO 5's form (simulator/redfish.py,
which ``simulate ilo`` serves), with the metric series that then cannot agree with the
simulated CLI's, for the all-scenario comparison (tests/test_redfish_equivalence.py).

:class:`Rendered` ``excluded`` names each such series, with the reason, so a comparison
leaves them out on purpose, not silently: a fact of the scenario that iLO 5's properties say
in other words than the CLI (a status other than OK: the CLI's ``Failed`` is a state, the
iLO's ``Critical`` a severity), or that Redfish cannot tie to a controller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smartarray_agent.simulator.redfish import documents
from smartarray_agent.simulator.scenario import Controller, Scenario

MIB = 2**20
# the CLI's backup power statuses BackupPowerSourceStatus says itself (PresentAndCharged,
# PresentAndCharging); a failed battery is "Present" with the battery's Status.Health
# Critical, which the agent reads as the CLI's "Failed (Replace Batteries)"
_BACKUP = ("OK", "Recharging")
_BACKUP_STATUS = ("smartarray_backup_power_status", "smartarray_backup_power_status_info")


@dataclass
class Rendered:
    """The resource tree (path -> JSON object) and the series left out of a comparison:
    (family, controller label) -> why."""

    resources: dict[str, dict]
    excluded: dict[tuple[str, str], str] = field(default_factory=dict)

    def exclude(self, families: tuple[str, ...], slot: str, why: str) -> None:
        for family in families:
            self.excluded.setdefault((family, slot), why)


def render(scenario: Scenario) -> Rendered:
    """The iLO 5 tree of ``scenario``'s host and what of it cannot be compared."""
    out = Rendered(documents(scenario, "smartstorage"))
    batteries = sum(c.backup_power.source == "Batteries" and c.backup_power.count != 0
                    for c in scenario.controllers)
    for ctrl in scenario.controllers:
        _exclusions(out, ctrl, batteries)
    return out


def _exclusions(out: Rendered, ctrl: Controller, batteries: int) -> None:
    slot, cache, power = ctrl.slot, ctrl.cache, ctrl.backup_power
    if ctrl.status != "OK":
        out.exclude(("smartarray_controller_status",), slot,
                    f"controller status {ctrl.status!r}: Status.Health says it as a severity")
    if cache.present and cache.status != "OK":
        # the CLI's Cache Status says why the cache is off (temporarily disabled for a low
        # battery); the iLO's cache module says Disabled, and whether write cache is active
        # follows from that status
        out.exclude(("smartarray_cache_status", "smartarray_cache_status_info",
                     "smartarray_write_cache_active", "smartarray_unprotected_write_cache"),
                    slot, f"cache status {cache.status!r}: the iLO says Disabled")
    for kind, drives in (("logical", ctrl.logical_drives), ("physical", ctrl.physical_drives)):
        if any(drive.status != "OK" for drive in drives):
            out.exclude((f"smartarray_{kind}_drive_status", f"smartarray_{kind}_drive_status_info"),
                        slot, f"a {kind} drive's status other than OK: Status.Health's severity")
    if power.count == 0 or (power.source is None and power.status is None):
        return  # NotPresent, or nothing said on either side
    status = power.status or ""
    if power.source != "Batteries" or batteries != 1:
        # the battery maps to this controller only where it is the one battery (merge.py,
        # rule 1); a capacitor pack is no Smart Storage Battery: no source, no count
        out.exclude(("smartarray_backup_power_source", "smartarray_backup_power_units"), slot,
                    f"{power.source} with {batteries} Smart Storage Batteries: Redfish does "
                    "not say which backs this controller")
        if status not in _BACKUP:
            out.exclude(_BACKUP_STATUS, slot, f"backup power {status!r} with no battery "
                                              "mapped: Present says nothing of its health")
    elif status not in _BACKUP and not status.startswith("Failed"):
        out.exclude(_BACKUP_STATUS, slot, f"backup power {status!r}: the battery's Health "
                                          "(OK, Warning, Critical) has no such word")
