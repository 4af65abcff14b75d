"""What an iLO may make the agent hold (issue #39, finding 2): one answer at most 1 MiB, the
answers of one read at most 2 MiB. A 16 MiB answer of ``{}`` objects parsed to 450 MiB, and
a read kept every document until it ended."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.client import MAX_ANSWER_BYTES, MAX_READ_BYTES
from smartarray_agent.collectors.redfish.crawl import read_ilo, read_reading
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings

from . import redfish_ilo as fake


def _settings(tmp_path, address: str) -> RedfishSettings:
    return RedfishSettings(address=address, credentials_file=fake.credentials_file(tmp_path),
                           ca_file=fake.certificate()[0], read_timeout_s=10)


def _padded(document: dict, size: int) -> dict:
    """``document`` with an OEM field that brings its JSON to ``size`` bytes or more."""
    return {**document, "Oem": {**document.get("Oem", {}), "Pad": "x" * size}}


def test_an_answer_larger_than_1_mib_ends_the_read(tmp_path):
    resources = fake.ilo5()
    resources[fake.CHASSIS] = {"Oem": {"Hpe": {"SmartStorageBattery": [{}] * MAX_ANSWER_BYTES}}}
    with fake.serve(fake.Ilo(resources)) as ilo:
        with pytest.raises(RedfishError, match=r"answer larger than 1 MiB"):
            asyncio.run(read_reading(_settings(tmp_path, ilo.address)))
        assert ilo.logouts == ilo.logins


def test_answers_that_pass_2_mib_in_one_read_end_it(tmp_path):
    each = MAX_ANSWER_BYTES - 4096
    controllers = [_padded(fake.controller(ident=str(n), slot=str(n)), each) for n in range(3)]
    resources = fake.ilo5(controllers=controllers)
    assert sum(len(json.dumps(c)) for c in controllers) > MAX_READ_BYTES
    with fake.serve(fake.Ilo(resources)) as ilo:
        with pytest.raises(RedfishError, match=r"the read's answers passed 2 MiB"):
            asyncio.run(read_reading(_settings(tmp_path, ilo.address)))
        with pytest.raises(RedfishError, match=r"passed 2 MiB|larger than 1 MiB"):
            asyncio.run(read_ilo(_settings(tmp_path, ilo.address)))


def test_a_read_within_the_bounds_is_read(tmp_path):
    controllers = [_padded(fake.controller(), 512 * 1024)]
    with fake.serve(fake.Ilo(fake.ilo5(controllers=controllers))) as ilo:
        reading = asyncio.run(read_reading(_settings(tmp_path, ilo.address)))
    assert [c.serial for c in reading.controllers] == [fake.GEN10_SERIAL]


def test_every_unit_has_the_memory_ceiling_the_bounds_justify():
    """docs/privileges.md, "Memory": serve at the default max_sessions holds about 75 MiB +
    4 x 64 MiB at the worst, under the ceiling, and every unit has one."""
    units = Path(__file__).resolve().parents[1] / "systemd"
    ceilings = {}
    for unit in units.glob("*.service"):
        lines = [line for line in unit.read_text().splitlines() if line.startswith("MemoryMax=")]
        assert len(lines) == 1, unit.name
        ceilings[unit.name] = int(lines[0].removeprefix("MemoryMax=").removesuffix("M"))
    worst_read_mib = MAX_READ_BYTES / 2**20 * 32
    assert ceilings["smartarray-agent-serve.service"] >= 75 + 4 * worst_read_mib
    assert set(ceilings) >= {"smartarray-agent.service", "smartarray-agent-serve.service"}
