"""Which command a fault hits, the scenario after the battery timeline, garbage (docs/cli.md
lists the faults)."""

from __future__ import annotations

import json
import os

from smartarray_agent.simulator.modify import Change, apply
from smartarray_agent.simulator.scenario import (
    Faults,
    Scenario,
    ScenarioError,
    faults_with,
)

FAULTS_ENV = "SMARTARRAY_SIM_FAULTS"


def effective_faults(scenario: Scenario, environ: dict[str, str] | None = None) -> Faults:
    raw = (os.environ if environ is None else environ).get(FAULTS_ENV, "").strip()
    if not raw:
        return scenario.faults
    try:
        override = json.loads(raw)
        if not isinstance(override, dict):
            raise ValueError("not a JSON object")
        return faults_with(scenario.faults, override)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ScenarioError(f"{FAULTS_ENV}: {exc}") from exc


def matches(patterns: list[str], command: str) -> bool:
    return any(p == "*" or (p and " ".join(p.lower().split()) in command) for p in patterns)


def at_time(scenario: Scenario, faults: Faults, elapsed_s: float) -> Scenario:
    """``scenario`` with every battery-timeline step due by ``elapsed_s`` applied."""
    due = sorted((s for s in faults.battery_timeline if s.after_s <= elapsed_s),
                 key=lambda s: s.after_s)
    changes = [Change(step.slot, field, value or None) for step in due for field, value in (
        ("backup_power.status", step.battery_status), ("cache.status", step.cache_status),
        ("cache.status_details", step.cache_status_details)) if value is not None]
    return apply(scenario, changes) if changes else scenario


def garbage(seed: str, size: int = 1536) -> bytes:
    """Bytes no CLI prints: NULs, invalid UTF-8, control characters, a few newlines."""
    import random  # here: only this fault needs it

    rng = random.Random(seed)
    noise = bytearray(rng.randbytes(size))
    for index in range(0, size, rng.randint(40, 120)):
        noise[index] = 0x0A
    return bytes(noise)
