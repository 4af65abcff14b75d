"""Fetch what the iLO's readers read, in one Redfish session: the documents by path. The
running half of the snapshot and of the battery reading; the parsing half is pure.

iLO 4 and 5: ``Chassis/1`` (the battery; iLO 4: ``Systems/1``),
``Systems/1/SmartStorage/ArrayControllers`` and each controller, its ``Links.LogicalDrives``
and ``Links.PhysicalDrives`` collections (iLO 4: ``links`` and ``href``) and their members.
Where that lists no controller (iLO 6 and later): ``Systems/1/Storage``, each Storage
resource, its ``Controllers`` and ``Volumes`` collections with their members, and each of
its ``Drives``. A resource that is not there (404) is left out; the snapshot says so. A
``Controllers`` collection that fails otherwise (500, a timeout) is left out too where the
Storage resource carries its controllers inline, and the snapshot says why. The battery
reading (:func:`read_reading`) stops at the array controllers.

Coroutines, on the caller's event loop (``/probe``'s) or on one of their own
(``asyncio.run``: the commands, the daemon's collector).
"""

from __future__ import annotations

import ssl
import time

from smartarray_agent.collectors.redfish import dmtf
from smartarray_agent.collectors.redfish.client import RedfishClient
from smartarray_agent.collectors.redfish.errors import RedfishError, answers_read
from smartarray_agent.collectors.redfish.resources import (
    Reading,
    array_controller,
    chassis_batteries,
    link,
    members,
)
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.redfish.snapshot import (
    ARRAY_CONTROLLERS,
    CHASSIS,
    NOTICE,
    STORAGE,
    SYSTEM,
    batteries,
    snapshot_from,
    uses_smartstorage,
)
from smartarray_agent.common.model import Snapshot


async def read_ilo(settings: RedfishSettings, deadline: float | None = None,
                   tls: ssl.SSLContext | None = None) -> Snapshot:
    """The snapshot of the iLO ``settings`` names, read before ``deadline`` (monotonic) when
    one is given. Raises :class:`RedfishError` (one line, never a password)."""
    where = f"{settings.host}:{settings.port}"
    failed: list[str] = []
    with answers_read(where):
        documents = await _documents(settings, failed, True, deadline, tls)
        snapshot = snapshot_from(documents, where)
    snapshot.notices.extend(f"{NOTICE}{reason}" for reason in failed)
    return snapshot


async def read_reading(settings: RedfishSettings) -> Reading:
    """The iLO's batteries and array controllers, taken now (monotonic): the charge's
    reading. Raises :class:`RedfishError` (one line, never a password)."""
    with answers_read(f"{settings.host}:{settings.port}"):
        documents = await _documents(settings, [], False)
        collection = documents.get(ARRAY_CONTROLLERS)
        listed = [] if collection is None else members(collection, ARRAY_CONTROLLERS)
        return Reading(taken_at=time.monotonic(), batteries=batteries(documents),
                       controllers=[array_controller(path, documents[path])
                                    for path in listed if path in documents])


async def _documents(settings: RedfishSettings, failed: list[str], drives: bool,
                     deadline: float | None = None,
                     tls: ssl.SSLContext | None = None) -> dict[str, dict]:
    async with RedfishClient(settings, deadline, tls) as client:
        return await fetch_documents(client, failed, drives)


async def fetch_documents(client: RedfishClient, failed: list[str],
                          drives: bool = True) -> dict[str, dict]:
    """The documents :func:`snapshot_from` reads (without ``drives``, only the batteries'
    and the array controllers'), by the path their links name; a request the snapshot can
    do without (a ``Controllers`` collection whose controllers the Storage resource also
    carries inline) that fails is added to ``failed``, why, and not raised."""
    documents: dict[str, dict] = {}

    async def get(path: str) -> dict | None:
        if path not in documents:
            found = await client.get(path)
            if found is None:
                return None
            documents[path] = found
        return documents[path]

    async def get_members(path: str) -> list[str]:
        collection = await get(path)
        listed = members(collection, path) if collection is not None else []
        return [member for member in listed if await get(member) is not None]

    chassis = await get(CHASSIS)
    if chassis is None or chassis_batteries(chassis) is None:
        await get(SYSTEM)  # iLO 4 lists its battery there
    await get(ARRAY_CONTROLLERS)
    if uses_smartstorage(documents):
        for path in await get_members(ARRAY_CONTROLLERS):
            for name in ("LogicalDrives", "PhysicalDrives") if drives else ():
                where = link(documents[path], name)
                if where is not None:
                    await get_members(where)
        return documents
    for path in await get_members(STORAGE) if drives else ():
        storage = documents[path]
        for where in dmtf.collection_links(storage):
            try:
                await get_members(where)
            except RedfishError as error:
                if where != dmtf.controllers_link(storage) or not dmtf.carried_controllers(
                        storage):
                    raise
                failed.append(str(error))
        for drive in dmtf.drive_links(storage):
            await get(drive)
    return documents
