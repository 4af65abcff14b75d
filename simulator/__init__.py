"""The simulator of the HP/HPE Smart Array CLI (docs/layout.md, "Simulator"; docs/cli.md,
"simulate"); the agent runs it in place of the vendor binary through :func:`vendor_argv`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from smartarray_agent.simulator.scenario import ScenarioError

BUNDLED = Path(__file__).with_name("scenarios")

__all__ = ["BUNDLED", "ScenarioError", "list_scenarios", "resolve_scenario", "vendor_argv"]


def list_scenarios() -> list[tuple[str, str]]:
    """Bundled scenarios as ``(name, one-line description)``, by name."""
    import tomllib  # here: a simulator answering a command has no use for it

    found = []
    for path in sorted(BUNDLED.glob("*.toml")):
        description = tomllib.loads(path.read_text(encoding="utf-8")).get("description", "")
        found.append((path.stem, description))
    return found


def resolve_scenario(name_or_path: str | os.PathLike[str]) -> Path:
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path.resolve()
    bundled = BUNDLED / f"{name_or_path}.toml"
    if os.sep not in str(name_or_path) and bundled.is_file():
        return bundled
    names = ", ".join(name for name, _ in list_scenarios())
    raise ScenarioError(f"unknown scenario {str(name_or_path)!r}: no such file and not one of "
                        f"{names}")


def vendor_argv(scenario: str | os.PathLike[str],
                state_dir: str | os.PathLike[str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", __name__, "--scenario", str(resolve_scenario(scenario))]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    return argv
