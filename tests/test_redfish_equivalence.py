"""The same host read two ways gives the same metrics: every bundled simulator scenario,
once through the simulated CLI (``metrics --once --simulate NAME``) and once through a
``/probe`` of a fake iLO 5 serving that scenario as the simulated iLO renders it in iLO 5's
form (simulator/redfish.py, through tests/redfish_scenario.py), for every fact both sources
know.

A fact is one series of a family, or for a family of states (``state``, ``mode``,
``source``) the one state that is 1. Where the CLI does not say (no series, or the state
``absent``), only the iLO knows, and there is nothing to compare. Where the CLI says and the
iLO does not, the fact must be named below or in the renderer's exclusions, with why.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.snapshot import snapshot_from
from smartarray_agent.probe.prober import Prober
from smartarray_agent.simulator import BUNDLED
from smartarray_agent.simulator.redfish import ROOT, SYSTEM
from smartarray_agent.simulator.scenario import load_scenario

from .redfish_ilo import CHASSIS, ILO5_TREE, Ilo, serve, tree
from .redfish_scenario import MIB, render
from .test_probe import endpoint, get, local_page, probe_config, samples, value

SCENARIOS = sorted(BUNDLED.glob("*.toml"))
STATE_LABELS = ("state", "mode", "source")
# families of the local page the iLO never gives (docs/redfish.md, "Always null ... from
# iLO 5"), and the agent's own
NOT_FROM_THE_ILO = {
    "smartarray_build_info": "the agent's own",
    "smartarray_unfinished_changes": "the agent's own",
    "smartarray_collector_success": "the agent's own",
    "smartarray_collector_duration_seconds": "the agent's own",
    "smartarray_collector_last_success_timestamp_seconds": "the agent's own",
    "smartarray_cli_info": "no vendor CLI runs",
    "smartarray_controller_temperature_celsius": "iLO 5 gives no controller temperatures",
    "smartarray_drive_write_cache_policy": "the iLO gives one DriveWriteCache, not Gen10's "
                                           "per-usage policies",
    "smartarray_physical_drive_max_temperature_celsius":
        "MaximumTemperatureCelsius is the drive's rated maximum, not the highest seen",
    "smartarray_physical_drive_temperature_celsius":
        "the scenario has no drive temperatures (the simulator prints made-up ones)",
}
# info labels the iLO does not give, left out of the comparison of those series
IGNORED_LABELS = {
    "smartarray_controller_info": {"pci_address"},  # no such property
    "smartarray_logical_drive_info": {"array", "disk_name", "device"},  # no such properties
    # no array; HPE's Model has no vendor prefix (docs/redfish.md); the scenarios give no
    # serials and the simulator makes them up, so the rendered drives have none
    "smartarray_physical_drive_info": {"array", "model", "serial"},
}
# the iLO gives sizes in MiB, the CLI in rounded decimal or binary units: one MiB apart at most
SIZES = {"smartarray_cache_size_bytes", "smartarray_logical_drive_size_bytes",
         "smartarray_physical_drive_size_bytes"}

Facts = dict[tuple[str, tuple[tuple[str, str], ...]], object]


def facts(page: str) -> Facts:
    """(family, labels) -> value; a state family's fact is the state that is 1."""
    found: Facts = {}
    for (name, labels), number in samples(page).items():
        keep = tuple((k, v) for k, v in labels if k not in IGNORED_LABELS.get(name, ()))
        state = next((v for k, v in labels if k in STATE_LABELS), None)
        if state is None:
            found[(name, keep)] = number
        elif number == 1.0:
            found[(name, tuple((k, v) for k, v in keep if k not in STATE_LABELS))] = state
    return found


@pytest.fixture(scope="module")
def ilo() -> Iterator[Ilo]:
    """One fake iLO for every scenario: each test puts its scenario's tree in."""
    with serve(Ilo({})) as fake:
        yield fake


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_the_cli_and_the_ilo_give_the_same_metrics(path: Path, ilo: Ilo, tmp_path: Path):
    rendered = render(load_scenario(path))
    ilo.resources = rendered.resources
    with endpoint(Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)) as server:
        status, page = get(server, f"target={ilo.address}&module=default")
    assert status == 200 and value(page, "smartarray_probe_success") == 1.0, page
    probed = facts(page)
    compared, missing, different = 0, [], []
    for (name, labels), said in facts(local_page(tmp_path, path.stem)).items():
        controller = dict(labels).get("controller", "")
        if name in NOT_FROM_THE_ILO or (name, controller) in rendered.excluded or (
                said == "absent"):
            continue
        theirs = probed.get((name, labels))
        if theirs is None:
            missing.append((name, labels, said))
        elif said != theirs and not (name in SIZES and abs(said - theirs) <= MIB):
            different.append((name, labels, said, theirs))
        compared += 1
    assert not missing and not different, (missing, different)
    # the core facts were compared, not skipped: controller, cache and drive families
    assert compared >= 10


def test_the_gen10_tree_says_what_the_renderer_says_of_the_gen10_scenario():
    """The hand-kept iLO 5 tree (tests/redfish_data/README.md: the gen10 scenario's host) and
    the renderer agree on every property the renderer writes, and on the snapshot."""
    kept = tree(ILO5_TREE)
    rendered = render(load_scenario(BUNDLED / "gen10.toml"))
    assert not rendered.excluded
    # the snapshots of the trees as they are, batteries included (compared below)
    ours = snapshot_from(copy.deepcopy(rendered.resources), "x").controllers[0]
    theirs = snapshot_from(tree(ILO5_TREE), "x").controllers[0]
    (battery,) = rendered.resources[CHASSIS]["Oem"]["Hpe"].pop("SmartStorageBattery")
    (kept_battery,) = kept[CHASSIS]["Oem"]["Hpe"].pop("SmartStorageBattery")
    # the scenario gives no charge: the renderer's full battery has 100, the kept one 99
    assert battery.pop("ChargeLevelPercent") == 100 and kept_battery.pop("ChargeLevelPercent")
    assert battery == kept_battery
    for path, doc in rendered.resources.items():
        if path in (ROOT, SYSTEM):
            continue  # the service root and the system: the kept tree is the storage's
        assert path in kept, path
        # the kept drives have a real drive's exact capacity (915715 MiB), the scenario the
        # label's "960 GB"; the size comparison of the test above allows one MiB
        if "/DiskDrives/" in path:
            doc.pop("CapacityMiB", None)
        # the kept tree says more (more links, the cache module's serial, drive
        # temperatures, ...); the renderer says one thing more: CacheModuleStatus.State
        # (iLO 5 1.40), which the kept answer, of older firmware, lacks
        doc.get("CacheModuleStatus", {}).pop("State", None)
        # the renderer's full battery is PresentAndCharged, the kept answer says Present:
        # both map the battery (merge.py, rule 1), whose health OK is the status either way
        # (the snapshots are compared below)
        if doc.pop("BackupPowerSourceStatus", "Present") != "Present":
            assert kept[path]["BackupPowerSourceStatus"] == "Present"
        assert _within(doc, kept[path]), path
    for field in ("slot", "model", "serial", "firmware", "status", "mode"):
        assert getattr(ours, field) == getattr(theirs, field), field
    # the one battery backs the controller in both; its charge is the one difference
    assert ours.backup_power.model_dump(exclude={"charge_percent"}) == \
        theirs.backup_power.model_dump(exclude={"charge_percent"})
    assert (ours.backup_power.charge_percent, theirs.backup_power.charge_percent) == (100, 99)
    assert ours.cache.model_dump(exclude={"drive_write_cache"}) == theirs.cache.model_dump(
        exclude={"drive_write_cache"})  # the scenario has Gen10's policies, not the switch
    assert json.dumps(ours.logical_drives[0].model_dump(exclude={"raw", "size_bytes"})) == \
        json.dumps(theirs.logical_drives[0].model_dump(exclude={"raw", "size_bytes"}))


def _within(mine: object, theirs: object) -> bool:
    """Whether every property of ``mine``, at every depth, is in ``theirs`` with the same
    value."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return all(key in theirs and _within(value, theirs[key]) for key, value in mine.items())
    return mine == theirs
