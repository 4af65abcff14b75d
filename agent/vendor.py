"""The one way to build the vendor-CLI stack from the configuration: which CLI (the bundled
simulator for ``simulate``, answering in this process: agent/simulated.py; else ``path``,
else discovered), the host lock and the timeout. The daemon and every command go through
:func:`open_runner`."""

from __future__ import annotations

from pathlib import Path

from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.ssacli.discover import CliNotFound, VendorCli, find_cli
from smartarray_agent.collectors.ssacli.lock import HostLock, default_lock_path
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.config import SsacliConfig

# What to do about a missing CLI, in the words of who meets it: a command, or the service.
COMMAND_SIMULATE = ("without a Smart Array, --simulate SCENARIO runs the bundled simulator "
                    "('smartarray-agent simulate list' names the scenarios)")
COMMAND_HINT = f"or name it with --cli PATH; {COMMAND_SIMULATE}"
SERVICE_SIMULATE = ("without a Smart Array, [ssacli] simulate = \"SCENARIO\" runs the bundled "
                    "simulator")
SERVICE_HINT = f"or name it with [ssacli] path; {SERVICE_SIMULATE}"


class CliUnavailable(CollectionError):
    """No CLI to run: ``not_found`` (none installed, or ``path`` is not one) or
    ``bad_scenario`` (``simulate`` names no scenario)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def vendor_cli(config: SsacliConfig, *, service: bool = False) -> VendorCli:
    """The simulator for ``simulate``, else ``path``, else the discovered CLI. When there is
    none, CliUnavailable says what to do, to a command's user (where it looked, the options)
    or, for the ``service``, in a status line's length (the configuration keys)."""
    if config.simulate is not None:
        from smartarray_agent.simulated import SimulatedCli

        return SimulatedCli(_scenario(config.simulate))
    try:
        return find_cli(str(config.path) if config.path is not None else None)
    except CliNotFound as error:
        if config.path is not None:  # the message names the path and where it was given
            simulate = SERVICE_SIMULATE if service else COMMAND_SIMULATE
            raise CliUnavailable(f"{_one_line(error)}; {simulate}", "not_found") from None
        message = (f"{error.summary}, {SERVICE_HINT}" if service
                   else f"{_one_line(error)}, {COMMAND_HINT}")
        raise CliUnavailable(message, "not_found") from None


def open_runner(config: SsacliConfig, *, service: bool = False) -> VendorRunner:
    """A runner for the configured CLI (:func:`vendor_cli`) under the host lock."""
    return VendorRunner(vendor_cli(config, service=service),
                        HostLock(host_lock_path(config), config.lock_wait_s),
                        timeout_s=config.timeout_s)


def host_lock_path(config: SsacliConfig) -> Path:
    """``lock_file``, else the host's lock (``ssacli/lock.py``); when simulating, the simulated
    host's: ``cli.lock`` in the simulator's state directory, which the daemon and every command
    simulating that scenario share, as they share its state. Raises CliUnavailable."""
    if config.lock_file is not None:
        return config.lock_file
    if config.simulate is None:
        return default_lock_path()
    from smartarray_agent.simulator.state import default_state_dir

    return default_state_dir(_scenario(config.simulate).stem) / "cli.lock"


def _scenario(simulate: str) -> Path:
    """The scenario file ``simulate`` names; CliUnavailable (``bad_scenario``) when none."""
    from smartarray_agent import simulator

    try:
        return simulator.resolve_scenario(simulate)
    except simulator.ScenarioError as error:
        raise CliUnavailable(_one_line(error), "bad_scenario") from None


def _one_line(error: Exception) -> str:
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
