"""The agent's commands: ``run``, ``config check`` and ``metrics --once | --textfile DIR``.

docs/agent.md describes them, the configuration file and the endpoint.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import click
from click.exceptions import Exit

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, fail, with_context
from smartarray_agent.cli.options import listen_option
from smartarray_agent.config import DEFAULT_PATH, Config, load_config, parse_listen_address
from smartarray_agent.configfile import ConfigError

# The daemon, the exposition and the collectors are imported by the command that runs them,
# so that the other commands do not pay for them at start.

TEXTFILE_NAME = "smartarray.prom"
# The collection thread parses and renders in long CPU stretches; a short GIL switch
# interval gives the endpoint's thread the GIL back within 10 us (default: 5 ms) after each
# of its system calls, some 100 in a burst of 50 scrapes (docs/benchmarks.md). A switch is
# forced only while another thread waits: a collection with no scrape pays nothing.
SWITCH_INTERVAL_S = 0.00001

@click.command("run")
@with_context
@listen_option
@click.option("--log-level", default="info", show_default=True, metavar="LEVEL",
              help="debug, info, warning or error.")
def run(context: CommandContext, listen: str | None, log_level: str) -> None:
    """Collect in the background and serve Prometheus metrics until SIGTERM."""
    from smartarray_agent.daemon.agent import Agent, StartError
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.daemon.notify import Notifier

    level = _level(log_level)
    if listen is not None:
        try:
            parse_listen_address(listen)
        except ValueError as error:
            raise fail(f"--listen: {error}", exitcodes.BAD_INPUT) from None
    setup_logging(level)
    faulthandler.enable()  # WatchdogSignal=SIGABRT prints every thread's stack
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    overrides = dataclasses.replace(context.overrides, listen_address=listen)
    try:
        agent = Agent(context.config_path, overrides, Notifier.from_environment())
    except ConfigError as error:
        raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
    try:
        agent.start()
    except StartError as error:
        raise fail(str(error), exitcodes.CANNOT_SERVE) from None
    agent.serve_until_stopped()


@click.group("config", no_args_is_help=True, help="Check the agent's configuration file.")
def config_group() -> None:
    pass


@config_group.command(
    "check", help=f"Validate a configuration file FILE (default: the system file, "
                  f"{DEFAULT_PATH}) and the web config it names: print 'file:line: key: "
                  "problem' for each mistake and exit 2, or 'FILE: OK'.")
@click.argument("file", metavar="[FILE]", type=click.Path(path_type=Path), default=DEFAULT_PATH)
def config_check(file: Path) -> None:
    from smartarray_agent.daemon.agent import web_security

    try:
        loaded = load_config(file)
        web_security(loaded)
    except ConfigError as error:
        for problem in error.problems:
            click.echo(problem)
        raise Exit(exitcodes.BAD_INPUT) from None
    click.echo(f"{file}: OK")


@click.command("metrics")
@with_context
@click.option("--once", is_flag=True, help="Print the exposition and exit.")
@click.option("--textfile", type=click.Path(path_type=Path), metavar="DIR",
              help=f"Write DIR/{TEXTFILE_NAME} atomically (node_exporter textfile collector) "
                   "and exit.")
def metrics(context: CommandContext, once: bool, textfile: Path | None) -> None:
    """Collect once and print or write the metrics. Exit 11 when a collector failed (the
    metrics are still written, with smartarray_collector_success 0)."""
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.vendor import CliUnavailable, vendor_cli

    if once == (textfile is not None):
        raise fail("give exactly one of --once and --textfile DIR", exitcodes.BAD_INPUT)
    if textfile is not None and not textfile.is_dir():
        raise fail(f"--textfile {textfile}: not a directory", exitcodes.BAD_INPUT)
    setup_logging(logging.WARNING)
    try:
        vendor_cli(context.config.ssacli)
    except CliUnavailable as error:
        if error.reason == "bad_scenario":  # a usage error; a missing CLI is a failed collector
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    body, failed = _collect_and_render(context.config)
    if textfile is not None:
        write_atomically(textfile / TEXTFILE_NAME, body)
    else:
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
    for name, why in failed:
        click.echo(f"smartarray-agent: collector {name} failed: {why}", err=True)
    if failed:  # distinct from 1, a crash: the textfile unit counts only this as success
        raise Exit(exitcodes.COLLECTOR_FAILED)


def _collect_and_render(config: Config) -> tuple[bytes, list[tuple[str, str | None]]]:
    from smartarray_agent.collectors.base import collect_once
    from smartarray_agent.exporter.render import Entry, MetricSettings, render
    from smartarray_agent.sources import build_collectors

    entries: list[Entry] = []
    for collector in build_collectors(config):
        try:
            entries.append((collector, collect_once(collector, None)))
        finally:
            collector.close()
    # One collection: every value is served, whatever its age.
    body = render(entries, now=time.time(), settings=MetricSettings(stale_after_s=None))
    return body, [(r.name, r.error) for _, r in entries if not r.success]


def write_atomically(path: Path, data: bytes) -> None:
    """Write a temporary file in the same directory (named so the textfile collector skips
    it), flush it to disk, then rename it over ``path``: a reader sees the old file or the
    new one, never a part."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _level(name: str) -> int:
    level = logging.getLevelName(name.upper())
    if not isinstance(level, int) or name.lower() not in ("debug", "info", "warning", "error"):
        raise fail(f"--log-level {name!r}: use debug, info, warning or error",
                   exitcodes.BAD_INPUT)
    return level
