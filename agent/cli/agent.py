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
from argparse import Namespace
from pathlib import Path

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.command import Command, Group, Parser
from smartarray_agent.cli.context import CommandContext, add_context_options, fail
from smartarray_agent.cli.options import add_listen
from smartarray_agent.config import DEFAULT_PATH, Config, load_config, parse_listen_address
from smartarray_agent.configfile import ConfigError

# The daemon, the exposition and the collectors are imported by the command that runs them,
# so that the other commands do not pay for them at start.

TEXTFILE_NAME = "smartarray.prom"


def _run_arguments(parser: Parser) -> None:
    add_listen(parser)
    parser.add_argument("--log-level", default="info", metavar="LEVEL",
                        help="debug, info, warning or error (default: %(default)s).")
    add_context_options(parser)


def _run(args: Namespace) -> None:
    from smartarray_agent.daemon.agent import Agent, StartError
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.daemon.notify import Notifier

    context = CommandContext.from_args(args)
    listen: str | None = args.listen
    level = _level(args.log_level)
    if listen is not None:
        try:
            parse_listen_address(listen)
        except ValueError as error:
            raise fail(f"--listen: {error}", exitcodes.BAD_INPUT) from None
    setup_logging(level)
    faulthandler.enable()  # WatchdogSignal=SIGABRT prints every thread's stack
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


run = Command("Collect in the background and serve Prometheus metrics until SIGTERM.",
              _run, _run_arguments)


def _config_check_arguments(parser: Parser) -> None:
    parser.add_argument("file", metavar="FILE", nargs="?", type=Path, default=DEFAULT_PATH)


def _config_check(args: Namespace) -> None:
    from smartarray_agent.daemon.agent import web_security

    file: Path = args.file
    try:
        loaded = load_config(file)
        web_security(loaded)
    except ConfigError as error:
        for problem in error.problems:
            print(problem)
        raise SystemExit(exitcodes.BAD_INPUT) from None
    print(f"{file}: OK")


config_group = Group.of("Check the agent's configuration file.", {
    "check": Command(
        f"Validate a configuration file FILE (default: the system file, {DEFAULT_PATH}) and "
        "the web config it names: print 'file:line: key: problem' for each mistake and exit "
        "2, or 'FILE: OK'.",
        _config_check, _config_check_arguments),
})


def _metrics_arguments(parser: Parser) -> None:
    parser.add_argument("--once", action="store_true", help="Print the exposition and exit.")
    parser.add_argument(
        "--textfile", type=Path, metavar="DIR",
        help=f"Write DIR/{TEXTFILE_NAME} atomically (node_exporter textfile collector) and "
             "exit.")
    add_context_options(parser)


def _metrics(args: Namespace) -> None:
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.vendor import CliUnavailable, vendor_cli

    context = CommandContext.from_args(args)
    once: bool = args.once
    textfile: Path | None = args.textfile
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
        print(f"smartarray-agent: collector {name} failed: {why}", file=sys.stderr)
    if failed:  # distinct from 1, a crash: the textfile unit counts only this as success
        raise SystemExit(exitcodes.COLLECTOR_FAILED)


metrics = Command(
    "Collect once and print or write the metrics. Exit 11 when a collector failed (the "
    "metrics are still written, with smartarray_collector_success 0).",
    _metrics, _metrics_arguments)


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
