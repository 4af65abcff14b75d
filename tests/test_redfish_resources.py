"""Pure parsing of iLO Redfish JSON: odd values become None, never a guess."""

from __future__ import annotations

import pytest
from pydantic import AliasChoices, AliasPath, BaseModel

from smartarray_agent.collectors.redfish.dmtf import Drive, StorageController, Volume
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.resources import (
    ArrayController,
    Battery,
    array_controller,
    chassis_batteries,
    members,
    system_batteries,
)
from smartarray_agent.collectors.redfish.smartstorage import (
    SmartArray,
    SmartDiskDrive,
    SmartLogicalDrive,
)

from .redfish_ilo import CHASSIS, SYSTEM, battery_ilo5, controller, ilo4, ilo5


def test_ilo5_chassis_and_ilo4_system_are_read_from_their_own_place():
    assert len(chassis_batteries(ilo5()[CHASSIS])) == 1
    assert system_batteries(ilo5()[SYSTEM]) is None
    assert chassis_batteries(ilo4()[CHASSIS]) is None
    assert len(system_batteries(ilo4()[SYSTEM])) == 1


def test_values_out_of_range_or_of_the_wrong_type_are_unknown():
    odd = battery_ilo5(charge=255, RemainingChargeTimeSeconds="soon", BatteryWearLevelPercent=7,
                       Index=True, MaximumCapWatts=float("nan"))
    (battery,) = chassis_batteries({"Oem": {"Hpe": {"SmartStorageBattery": [odd, "junk"]}}})
    assert battery.charge_percent is None and battery.remaining_charge_time_s is None
    assert battery.index is None and battery.capacity_watts is None
    assert battery.wear_percent == 7.0


def test_a_battery_list_that_is_not_a_list_is_no_list():
    assert chassis_batteries({"Oem": {"Hpe": {"SmartStorageBattery": {"Index": 1}}}}) is None


@pytest.mark.parametrize(
    ("location", "slot"),
    [("Slot 0", "0"), ("slot 3", "3"), ("Slot UNKNOWN", None), ("Embedded", None), (None, None)],
)
def test_controller_slot_from_location(location, slot):
    data = controller()
    data["Location"] = location
    assert array_controller("/x/", data).slot == slot


def test_controller_words_are_normalised():
    ctrl = array_controller("/x/", controller(backup="NotPresent"))
    assert (ctrl.backup_power, ctrl.cache_module_health, ctrl.health) == ("not_present", "ok", "ok")
    assert (ctrl.location, ctrl.cache_size_mib) == ("Slot 0", 2048)


def test_members_of_a_collection():
    data = {"Members": [{"@odata.id": "/redfish/v1/a/"}, {"@odata.id": 3}, "junk"]}
    assert members(data, "/c/") == ["/redfish/v1/a/"]
    with pytest.raises(RedfishError, match="not a Redfish collection"):
        members({"Items": []}, "/c/")


def _odd_document(model: type[BaseModel]) -> dict:
    """A document with an object where each property ``model`` reads should be a value."""
    document: dict = {}
    for field in model.model_fields.values():
        names = field.validation_alias or field.alias
        for name in names.choices if isinstance(names, AliasChoices) else [names]:
            path = name.path if isinstance(name, AliasPath) else [name]
            if path == [None]:
                continue
            target = document
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[path[-1]] = {"odd": 1}
    return document


@pytest.mark.parametrize("model", [Battery, ArrayController, SmartArray, SmartLogicalDrive,
                                   SmartDiskDrive, StorageController, Drive, Volume],
                         ids=lambda model: model.__name__)
def test_every_property_of_the_wrong_type_is_unknown_and_nothing_fails(model):
    document = _odd_document(model)
    assert len(document) >= 3
    read = model.model_validate({**document, "resource": "/x/"}).model_dump()
    read.pop("resource", None)
    # a charge that is no number is kept as sent, for the notice that says so
    assert read.pop("charge_unreadable", '{"odd": 1}') == '{"odd": 1}'
    assert all(value in (None, []) for value in read.values()), read
