"""Fetch what :func:`~smartarray_agent.collectors.redfish.snapshot.snapshot_from` reads: one
Redfish session, the documents by path. The running half of the agentless snapshot; the
parsing half is pure.

iLO 5: ``Chassis/1`` (the battery), ``Systems/1/SmartStorage/ArrayControllers`` and each
controller, its ``Links.LogicalDrives`` and ``Links.PhysicalDrives`` collections and their
members. Where that lists no controller (iLO 6 and later): ``Systems/1/Storage``, each
Storage resource, its ``Controllers`` and ``Volumes`` collections with their members, and
each of its ``Drives``. A resource that is not there (404) is left out; the snapshot says so.
"""

from __future__ import annotations

from smartarray_agent.collectors.redfish import dmtf
from smartarray_agent.collectors.redfish.client import RedfishClient
from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.resources import as_dict, chassis_batteries, members
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.redfish.snapshot import (
    ARRAY_CONTROLLERS,
    CHASSIS,
    STORAGE,
    SYSTEM,
    snapshot_from,
    uses_smartstorage,
)
from smartarray_agent.common.model import Snapshot


def read_ilo(settings: RedfishSettings, deadline: float | None = None) -> Snapshot:
    """The snapshot of the iLO ``settings`` names, read before ``deadline`` (monotonic) when
    one is given. Raises :class:`RedfishError` (one line, never a password)."""
    try:
        credentials = load_credentials(settings.credentials_file)
    except CredentialsError as error:
        raise RedfishError(str(error)) from None
    with RedfishClient(settings, credentials, deadline) as client:
        documents = fetch_documents(client)
    return snapshot_from(documents, f"{settings.host}:{settings.port}")


def fetch_documents(client: RedfishClient) -> dict[str, dict]:
    documents: dict[str, dict] = {}

    def get(path: str) -> dict | None:
        if path not in documents:
            found = client.get_optional(path)
            if found is None:
                return None
            documents[path] = found
        return documents[path]

    def get_members(path: str) -> list[str]:
        collection = get(path)
        listed = members(collection, path) if collection is not None else []
        return [member for member in listed if get(member) is not None]

    chassis = get(CHASSIS)
    if chassis is None or chassis_batteries(chassis) is None:
        get(SYSTEM)  # iLO 4 lists its battery there
    get(ARRAY_CONTROLLERS)
    if uses_smartstorage(documents):
        for path in get_members(ARRAY_CONTROLLERS):
            links = as_dict(documents[path].get("Links"))
            for name in ("LogicalDrives", "PhysicalDrives"):
                link = as_dict(links.get(name)).get("@odata.id")
                if isinstance(link, str):
                    get_members(link)
        return documents
    for path in get_members(STORAGE):
        for link in dmtf.collection_links(documents[path]):
            get_members(link)
        for drive in dmtf.drive_links(documents[path]):
            get(drive)
    return documents
