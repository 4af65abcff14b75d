"""``smartarray-agent run``: collect in the background and serve Prometheus metrics until
SIGTERM. docs/agent.md describes the daemon, the configuration file and the endpoint."""

import faulthandler
import logging
from typing import Annotated, Literal

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, fail, web_overrides
from smartarray_agent.cli.options import (
    CliPath,
    ConfigFile,
    Listen,
    LockFile,
    Simulate,
    TelemetryPath,
    Timeout,
    WebConfigFile,
)


def run(
    listen: Listen = None, web_config_file: WebConfigFile = None,
    telemetry_path: TelemetryPath = None,
    log_level: Annotated[Literal["debug", "info", "warning", "error"], typer.Option(
        "--log-level", case_sensitive=False, help="What to log.")] = "info",
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Collect in the background and serve Prometheus metrics until SIGTERM."""
    from smartarray_agent.common.configfile import ConfigError
    from smartarray_agent.daemon.agent import Agent, StartError
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.daemon.notify import Notifier

    context = CommandContext(config, simulate, cli, timeout, lock_file)
    web = web_overrides(listen, web_config_file, telemetry_path)
    setup_logging(logging.getLevelNamesMapping()[log_level.upper()])
    faulthandler.enable()  # WatchdogSignal=SIGABRT prints every thread's stack
    try:
        agent = Agent(context.config_path, context.overrides(web), Notifier.from_environment())
    except ConfigError as error:
        raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
    try:
        agent.start()
    except StartError as error:
        raise fail(str(error), exitcodes.CANNOT_SERVE) from None
    agent.serve_until_stopped()
