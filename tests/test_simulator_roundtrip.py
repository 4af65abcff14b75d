"""Round trip: the parser reads back every contract field the simulator renders.

``parse(render(state)) == state`` for generated states of every CLI generation, on the
contract fields of DESIGN.md (charge_percent aside: no CLI prints one). Generated states are
the ones a generation can show in full: RAID or mixed mode, a cache board, and sizes the
generation's unit prints exactly. What the CLI hides (HBA mode, no cache board, no backup
power) is checked on the bundled scenarios.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.common.model import Controller as Parsed
from smartarray_agent.common.model import normalise_status
from smartarray_agent.simulator import render, resolve_scenario
from smartarray_agent.simulator.dialect import DIALECTS, GIB, MIB
from smartarray_agent.simulator.scenario import (
    GENERATIONS,
    Controller,
    Scenario,
    load_scenario,
)

SHOW_COMMANDS = ("config detail", "detail")
MODELS = {
    "hpacucli9": ["Smart Array P410i", "Smart Array P400", "Smart Array P800", "Smart Array E200i"],
    "hpssacli2": ["Smart Array P420i", "Smart Array P440ar", "Smart HBA H240ar"],
    "ssacli3": ["Smart Array P420i", "Smart Array P440ar", "Smart Array P840"],
    "ssacli-gen10": ["HPE Smart Array P408i-a SR Gen10", "HPE Smart Array E208i-a SR Gen10"],
}
SIZES = {  # sizes each generation's unit prints exactly
    "mb": [128 * MIB, 256 * MIB, 512 * MIB, 1024 * MIB, 2 * GIB],
    "mb-gb": [256 * MIB, 512 * MIB, 1024 * MIB, 2 * GIB, 4 * GIB, 8 * GIB],
    "bare-gib": [GIB // 2, GIB, 2 * GIB, 4 * GIB, 8 * GIB],
}
CACHE_STATUSES = ["OK", "Temporarily Disabled", "Permanently Disabled", "Not Configured"]
DETAILS = [
    "Cache disabled; low batteries.",
    "Cache disabled; battery/capacitor charge is low.",
    "Cache disabled; backup power source failed to charge to an acceptable level",
]
BATTERY_STATUSES = [
    "OK",
    "Recharging",
    "Failed (Replace Batteries)",
    "Failed (Replace Batteries/Capacitors)",
]
POLICY = st.sampled_from(["Default", "Enable", "Disable"])
serials = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=8, max_size=16)


@st.composite
def drives(draw) -> dict:
    arrays = draw(st.lists(st.sampled_from("ABCD"), max_size=3, unique=True))
    bays = iter(range(1, 100))
    lds, pds, ld_id = [], [], 1
    for name in arrays:
        for _ in range(draw(st.integers(1, 2))):
            lds.append(
                {
                    "id": str(ld_id),
                    "array": name,
                    "raid": draw(st.sampled_from(["0", "1", "1+0", "5", "6"])),
                    "status": draw(st.sampled_from(["OK", "Interim Recovery Mode", "Failed"])),
                    "caching": draw(st.booleans()),
                }
            )
            ld_id += 1
    for name in [*arrays, None]:
        for _ in range(draw(st.integers(0 if name is None else 1, 3))):
            bay = next(bays)
            pds.append(
                {
                    "id": f"{draw(st.sampled_from(['1I', '2I', '1E']))}:1:{bay}",
                    "array": name,
                    "interface": draw(st.sampled_from(["SAS", "SATA"])),
                    "ssd": draw(st.booleans()),
                    "status": draw(st.sampled_from(["OK", "Failed", "Predictive Failure"])),
                }
            )
    return {"arrays": [{"name": n} for n in arrays], "logical_drives": lds, "physical_drives": pds}


@st.composite
def controllers(draw, generation: str, slot: str) -> dict:
    d = DIALECTS[generation]
    sizes = SIZES[d.size_style]
    optional_size = st.none() | st.sampled_from(sizes)
    ratio = draw(st.none() | st.sampled_from(d.ratios()))
    cache = {
        "status": draw(st.sampled_from(CACHE_STATUSES)),
        "status_details": draw(st.none() | st.sampled_from(DETAILS)),
        "disable_reason": draw(st.none() | st.just("Permanent disable condition.")),
        "size_bytes": draw(optional_size),
        "memory_available_bytes": draw(optional_size),
        "read_percent": ratio and ratio[0],
        "write_percent": ratio and ratio[1],
        "no_battery_write_cache": draw(st.booleans()),
        "wait_for_cache_room": draw(st.booleans()),
    }
    if d.gen10:
        cache["battery_backed_size_bytes"] = draw(optional_size)
        cache["drive_write_cache_policy"] = {
            "configured": draw(POLICY),
            "unconfigured": draw(POLICY),
            "hba": draw(st.none() | POLICY),
        }
    else:
        cache["drive_write_cache"] = draw(st.booleans())
    count = draw(st.none() | st.integers(0, 2))
    power: dict = {"count": count}
    if count:
        status = draw(st.sampled_from(BATTERY_STATUSES))
        power |= {
            "source": draw(st.sampled_from(["Batteries", "Capacitors"])),
            "status": status,
            "failed_locations": ["Battery 1"] if status.startswith("Failed") else [],
        }
    modes = [None] if not d.modes else ["raid", "mixed"] if d.gen10 else ["raid"]
    return {
        "slot": slot,
        "model": draw(st.sampled_from(MODELS[generation])),
        "serial": draw(serials),
        "firmware": draw(st.sampled_from(["6.60", "7.00-0", "1.98-0", "8.32"])),
        "status": draw(st.sampled_from(["OK", "Failed"])),
        "mode": draw(st.sampled_from(modes)),
        "embedded": draw(st.booleans()),
        "cache": cache,
        "backup_power": power,
        **draw(drives()),
    }


@st.composite
def scenarios(draw, generation: str) -> Scenario:
    slots = draw(st.lists(st.sampled_from(["0", "1", "2", "3", "5", "0b"]), min_size=1,
                          max_size=3, unique=True))  # fmt: skip
    ctrls = [draw(controllers(generation, slot)) for slot in slots]
    return Scenario.model_validate(
        {"description": "generated", "generation": generation, "controllers": ctrls}
    )


def expected(ctrl: Controller, generation: str) -> dict:
    """The contract fields a reader of ``ctrl``'s output should get."""
    cache, power = ctrl.cache, ctrl.backup_power
    policy = cache.drive_write_cache_policy
    return {
        "slot": ctrl.slot,
        "model": ctrl.model,
        "serial": ctrl.serial,
        "firmware": ctrl.firmware,
        "status": normalise_status(ctrl.status),
        "mode": ctrl.mode if DIALECTS[generation].modes else None,
        "cache": {
            "present": cache.present,
            "status": normalise_status(cache.status),
            "status_details": cache.status_details,
            "disable_reason": cache.disable_reason,
            "size_bytes": cache.size_bytes,
            "memory_available_bytes": cache.memory_available_bytes,
            "battery_backed_size_bytes": cache.battery_backed_size_bytes,
            "read_percent": cache.read_percent,
            "write_percent": cache.write_percent,
            "no_battery_write_cache": cache.no_battery_write_cache,
            "drive_write_cache": cache.drive_write_cache,
            "drive_write_cache_policy": policy
            and {k: v and v.lower() for k, v in policy.model_dump().items()},
            "wait_for_cache_room": cache.wait_for_cache_room,
        },
        "backup_power": {
            "source": power.source and power.source.lower(),
            "count": power.count,
            "status": normalise_status(power.status) if power.count else None,
            "status_text": power.status if power.count else None,
            "failed_locations": power.failed_locations if power.count else [],
        },
        "logical_drives": [(ld.id, normalise_status(ld.status)) for ld in ctrl.logical_drives],
        "physical_drives": sorted(
            (pd.id, normalise_status(pd.status)) for pd in ctrl.physical_drives
        ),
    }


def actual(parsed: Parsed) -> dict:
    """The same fields, from the parser's model."""
    data = {key: getattr(parsed, key)
            for key in ("slot", "model", "serial", "firmware", "status", "mode")}
    data["cache"] = parsed.cache.model_dump()
    data["backup_power"] = parsed.backup_power.model_dump()
    del data["backup_power"]["charge_percent"]
    data["logical_drives"] = [(ld.drive_id, ld.status) for ld in parsed.logical_drives]
    data["physical_drives"] = sorted((pd.drive_id, pd.status) for pd in parsed.physical_drives)
    return data


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("command", SHOW_COMMANDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_of_render_is_the_state(generation: str, command: str, data) -> None:
    scenario = data.draw(scenarios(generation))
    text = render.text(render.show(DIALECTS[generation], command, scenario.controllers))
    snapshot = parse(text)
    assert snapshot.error is None
    assert len(snapshot.controllers) == len(scenario.controllers)
    for ctrl, parsed in zip(scenario.controllers, snapshot.controllers, strict=True):
        want, got = expected(ctrl, generation), actual(parsed)
        if command == "detail":  # ctrl show detail lists no drives
            want["logical_drives"] = want["physical_drives"] = []
        assert got == want


@pytest.mark.parametrize(
    ("name", "cache", "power"),
    [
        ("hba-mode", {"present": None, "status": None, "no_battery_write_cache": None},
         {"source": None, "count": None, "status": None}),
        ("no-cache-module", {"present": False, "status": None, "read_percent": None,
                             "no_battery_write_cache": None, "drive_write_cache": False},
         {"source": None, "count": None, "status": None}),
        ("hpacucli-legacy", {"present": True, "status": "ok", "read_percent": 25},
         {"source": "batteries", "count": 1, "status": "ok"}),
    ],
)  # fmt: skip
def test_what_the_cli_hides_reads_back_as_absent(name: str, cache: dict, power: dict) -> None:
    scenario = load_scenario(resolve_scenario(name))
    text = render.text(render.show(DIALECTS[scenario.generation], "config detail",
                                   scenario.controllers))  # fmt: skip
    parsed = parse(text).controllers[0]
    assert {key: getattr(parsed.cache, key) for key in cache} == cache
    assert {key: getattr(parsed.backup_power, key) for key in power} == power
    assert [pd.drive_id for pd in parsed.physical_drives] == [
        pd.id for pd in scenario.controllers[0].physical_drives
    ]
