"""The Redfish collector: one session per collection, a :class:`Reading` with its time.

Requests: ``Chassis/1`` (iLO 5 batteries), ``Systems/1`` only when the chassis has no battery
list (iLO 4 batteries), then ``Systems/1/SmartStorage/ArrayControllers`` and each member.
A service without the SmartStorage resources gives a reading with no controllers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from smartarray_agent.collectors.redfish.client import RedfishClient
from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.resources import (
    ArrayController,
    Battery,
    Reading,
    array_controller,
    chassis_batteries,
    members,
    system_batteries,
)
from smartarray_agent.collectors.redfish.settings import RedfishSettings

CHASSIS = "/redfish/v1/Chassis/1/"
SYSTEM = "/redfish/v1/Systems/1/"
ARRAY_CONTROLLERS = "/redfish/v1/Systems/1/SmartStorage/ArrayControllers/"


class RedfishCollector:
    name = "redfish"

    def __init__(
        self, settings: RedfishSettings, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.last: Reading | None = None  # the last successful reading, for the guard

    @property
    def interval_s(self) -> float:
        """The agent's loop runs this collector on its own, slower schedule."""
        return self.settings.interval_s

    def collect(self) -> Reading:
        """Raises :class:`RedfishError` (one line, never a password) on any failure."""
        try:
            credentials = load_credentials(self.settings.credentials_file)
        except CredentialsError as error:
            raise RedfishError(str(error)) from None
        notices: list[str] = []
        with RedfishClient(self.settings, credentials) as client:
            batteries = _batteries(client, notices)
            controllers = _controllers(client, notices)
        self.last = Reading(
            taken_at=self.clock(), batteries=batteries, controllers=controllers, notices=notices
        )
        return self.last

    def close(self) -> None:
        """Nothing stays open between collections."""


def _batteries(client: RedfishClient, notices: list[str]) -> list[Battery]:
    found = chassis_batteries(client.get(CHASSIS))
    if found is None:
        found = system_batteries(client.get(SYSTEM))
    if found is None:
        notices.append("the iLO lists no Smart Storage Battery (no Oem battery data in "
                       "Chassis/1 or Systems/1)")
        return []
    return found


def _controllers(client: RedfishClient, notices: list[str]) -> list[ArrayController]:
    collection = client.get_optional(ARRAY_CONTROLLERS)
    if collection is None:
        notices.append("the iLO has no SmartStorage ArrayControllers resource")
        return []
    return [array_controller(path, client.get(path))
            for path in members(collection, ARRAY_CONTROLLERS)]
