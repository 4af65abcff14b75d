"""The status model from the iLO alone, with no vendor CLI: fetched Redfish documents (each
resource's JSON object by the path its link names; collectors/redfish/crawl.py fetches them)
in, a :class:`~smartarray_agent.common.model.Snapshot` out, for ``status --ilo``, ``check
--ilo`` and ``/probe`` alike. Pure: no I/O.

iLO 4 and 5 (HPE's OEM model, ``Systems/1/SmartStorage/ArrayControllers``) is read where it
lists a controller (smartstorage.py); else iLO 6 and later (the DMTF model,
``Systems/1/Storage``, dmtf.py). The battery is ``Chassis/1`` ``Oem.Hpe.SmartStorageBattery[]``
(iLO 4: ``Systems/1`` ``Oem.Hp.Battery[]``), mapped to controllers by rule 1 of merge.py, or
else shown as backing none. A fact the iLO does not give is ``None``; the notices say why.
"""

from __future__ import annotations

from smartarray_agent.collectors.redfish import dmtf, smartstorage
from smartarray_agent.collectors.redfish.merge import backed_controllers, battery_status
from smartarray_agent.collectors.redfish.resources import (
    Battery,
    Documents,
    Reading,
    array_controller,
    chassis_batteries,
    fetched,
    members,
    system_batteries,
)
from smartarray_agent.common.model import Controller, IloBattery, Snapshot

CHASSIS = "/redfish/v1/Chassis/1/"
SYSTEM = "/redfish/v1/Systems/1/"
ARRAY_CONTROLLERS = "/redfish/v1/Systems/1/SmartStorage/ArrayControllers/"
STORAGE = "/redfish/v1/Systems/1/Storage/"
NOTICE = "redfish: "


def snapshot_from(documents: Documents, ilo: str) -> Snapshot:
    """The snapshot of every controller ``documents`` describe, and of every battery the iLO
    lists that backs none of them; ``ilo`` names the iLO in the notices (``host:port``)."""
    notices = [f"{NOTICE}read from the iLO at {ilo} alone, no vendor CLI: a fact the iLO "
               "does not give is null"]
    found = batteries(documents)
    notices += [f"{NOTICE}battery {b.index} reports a charge that is not a number 0-100: "
                f"{b.charge_unreadable}: the charge is unknown"
                for b in found if b.charge_unreadable is not None]
    storage = documents.get(STORAGE)
    if uses_smartstorage(documents):
        controllers = _smartstorage(documents, found, notices)
    elif storage is not None:
        controllers = [ctrl for path in members(storage, STORAGE) if path in documents
                       for ctrl in dmtf.controllers(documents[path], documents)]
    else:
        controllers = []
        notices.append(f"{NOTICE}the iLO lists no SmartStorage array controller and has no "
                       "Storage resource")
    backed = any(c.backup_power.source == "batteries" for c in controllers)  # the one mapped
    return Snapshot(controllers=controllers, notices=notices, unassigned_batteries=[] if backed
                    else [_unassigned(battery) for battery in found])


def uses_smartstorage(documents: Documents) -> bool:
    """Whether the iLO lists a controller in HPE's OEM model (iLO 4 and 5)."""
    collection = documents.get(ARRAY_CONTROLLERS)
    return collection is not None and bool(members(collection, ARRAY_CONTROLLERS))


def batteries(documents: Documents) -> list[Battery]:
    """The batteries the iLO lists: ``Chassis/1`` (iLO 5 and later), else ``Systems/1``
    (iLO 4)."""
    for path, read in ((CHASSIS, chassis_batteries), (SYSTEM, system_batteries)):
        found = read(documents.get(path) or {})
        if found is not None:
            return found
    return []


def _smartstorage(documents: Documents, found: list[Battery],
                  notices: list[str]) -> list[Controller]:
    read = fetched(documents, members(documents[ARRAY_CONTROLLERS], ARRAY_CONTROLLERS), notices)
    reading = Reading(taken_at=0, batteries=found,
                      controllers=[array_controller(path, doc) for path, doc in read])
    backed = {rf.resource for rf in backed_controllers(reading)}
    if len(found) != 1:
        notices.append(f"{NOTICE}backup power charge unknown: the iLO reports "
                       f"{len(found)} batteries" + (
                           " and Redfish does not say which controller each one backs"
                           if found else ""))
    return [smartstorage.controller(path, doc, documents, found[0] if path in backed else None)
            for path, doc in read]


def _unassigned(battery: Battery) -> IloBattery:
    """A battery Redfish ties to no controller, in backup power's words."""
    return IloBattery(index=battery.index, model=battery.model, serial=battery.serial,
                      status=battery_status(battery.health, charging=False),
                      status_text=battery.health_text, charge_percent=battery.charge_percent)
