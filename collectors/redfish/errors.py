"""The one error every Redfish failure becomes."""

from __future__ import annotations

from smartarray_agent.collectors.base import CollectionError


class RedfishError(CollectionError):
    """A Redfish collection failed. The message is one line and never holds a password or a
    session token. A :class:`CollectionError`, so the agent's collection loop reports it as a
    failed collection like any other."""
