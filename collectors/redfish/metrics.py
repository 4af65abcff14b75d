"""A Redfish reading -> Prometheus metric families, by the conventions of
collectors/families.py (docs/metrics.md shows each). Pure: no I/O.

Battery series carry ``battery`` (the iLO's ``Index``), ``model`` and ``controller``: the
label the CLI's series give the one controller the battery backs (merge.py, rule 1), else
empty. A value the iLO does not report (iLO 4 has no charge) has no series; the charge is
dropped once the reading is older than ``[redfish] max_age_s`` (merge.py's ``charge_counts``).
"""

from __future__ import annotations

from prometheus_client.core import Metric

from smartarray_agent.collectors.families import Families, controller_label
from smartarray_agent.collectors.redfish.merge import backed_controllers, charge_counts
from smartarray_agent.collectors.redfish.resources import Reading

BATTERY_STATES = ("ok", "warning", "critical")

HELP = {
    "smartarray_battery_info": "Smart Storage Battery identity from the iLO; always 1.",
    "smartarray_battery_charge_ratio": "Battery charge (0-1), from the iLO (Redfish).",
    "smartarray_battery_wear_ratio": "Battery wear (0-1); at 1 the battery is worn out.",
    "smartarray_battery_capacity_watts": "Maximum power the battery can supply.",
    "smartarray_battery_remaining_charge_time_seconds":
        "Time the battery still needs to charge; 0 when charged.",
    "smartarray_battery_status": "Battery health from the iLO, one series per known state.",
}


def battery_families(reading: Reading, now: float, max_age_s: float) -> list[Metric]:
    """The battery metrics of ``reading`` as they stand at ``now``; the agent adds the
    collector's own three."""
    fresh = charge_counts(reading, now, max_age_s)
    backed = backed_controllers(reading)
    controller = controller_label(backed[0].slot, backed[0].serial) if len(backed) == 1 else ""
    out = Families(HELP)
    for position, battery in enumerate(reading.batteries):
        index = str(battery.index) if battery.index is not None else f"index:{position}"
        labels = {"battery": index, "model": battery.model or "", "controller": controller}
        out.gauge("smartarray_battery_info", {
            **labels, "serial": battery.serial or "", "product": battery.product_name or "",
            "firmware": battery.firmware or "",
        }, 1.0)
        out.gauge("smartarray_battery_charge_ratio", labels,
                  _ratio(battery.charge_percent) if fresh else None)
        out.gauge("smartarray_battery_wear_ratio", labels, _ratio(battery.wear_percent))
        out.gauge("smartarray_battery_capacity_watts", labels, battery.capacity_watts)
        out.gauge("smartarray_battery_remaining_charge_time_seconds", labels,
                  battery.remaining_charge_time_s)
        out.state("smartarray_battery_status", labels, BATTERY_STATES, battery.health)
    return out.metrics()


def _ratio(percent: float | None) -> float | None:
    return None if percent is None else percent / 100
