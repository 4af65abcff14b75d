"""``smartarray-agent metrics [--textfile DIR] [--input FILE]``: collect once (or read saved
CLI output) and print the metrics, or write them for node_exporter's textfile collector."""

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, CommandError, fail
from smartarray_agent.cli.options import (
    CliPath,
    ConfigFile,
    InputFile,
    LockFile,
    Simulate,
    Timeout,
)
from smartarray_agent.common.files import replace_file

if TYPE_CHECKING:
    from smartarray_agent.collectors.ssacli.runner import VendorRunner
    from smartarray_agent.exporter.render import Entry

TEXTFILE_NAME = "smartarray.prom"
Failures = list[tuple[str, str | None]]  # each failed collector's name, and why


def metrics(
    once: Annotated[bool, typer.Option(
        "--once", help="Print the exposition and exit (what the command does without "
                       "--textfile).")] = False,
    textfile: Annotated[Path | None, typer.Option(
        "--textfile", metavar="DIR",
        help=f"Write DIR/{TEXTFILE_NAME} atomically (node_exporter textfile collector) and "
             "exit.")] = None,
    input_file: InputFile = None,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Collect once and print the metrics (or write them with --textfile). With --input,
    the page that saved CLI output gives, and nothing of this host (it may be another's).
    Exit 11 when a collector failed (the metrics are still written, with
    smartarray_collector_success 0)."""
    context = CommandContext(config, simulate, cli, timeout, lock_file)
    if once and textfile is not None:
        raise typer.BadParameter("--once and --textfile exclude each other")
    if input_file is not None and simulate is not None:
        raise typer.BadParameter("--input and --simulate exclude each other")
    if textfile is not None and not textfile.is_dir():
        raise fail(f"--textfile {textfile}: not a directory", exitcodes.BAD_INPUT)
    body, failed = (_render_capture(context, input_file) if input_file is not None
                    else _collect_and_render(context))
    if textfile is not None:
        replace_file(textfile / TEXTFILE_NAME, body, 0o644)
    else:
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
    for name, why in failed:
        print(f"smartarray-agent: collector {name} failed: {why}", file=sys.stderr)
    if failed:  # distinct from 1, a crash: the textfile unit counts only this as success
        raise SystemExit(exitcodes.COLLECTOR_FAILED)


def _collect_and_render(context: CommandContext) -> tuple[bytes, Failures]:
    from smartarray_agent.collectors.base import collect_once
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.sources import build_collectors
    from smartarray_agent.vendor import CliUnavailable, vendor_cli

    setup_logging(logging.WARNING)
    try:
        vendor_cli(context.config.ssacli)
    except CliUnavailable as error:
        if error.reason == "bad_scenario":  # a usage error; a missing CLI is a failed collector
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    entries: list[Entry] = []
    for collector in build_collectors(context.config):
        try:
            entries.append((collector, collect_once(collector, None)))
        finally:
            collector.close()
    return _render(entries)


def _render_capture(context: CommandContext, input_file: str) -> tuple[bytes, Failures]:
    """The ssacli collector's page for saved CLI output: no iLO charge, no sysfs (it may be
    another host's)."""
    from smartarray_agent.collectors.base import CollectionError, CollectorResult
    from smartarray_agent.collectors.charge import Charge
    from smartarray_agent.collectors.ssacli.collector import SsacliCollector

    try:
        snapshot = context.read_snapshot(input_file)
    except CommandError as error:
        raise fail(str(error), error.code) from None

    def no_runner() -> "VendorRunner":
        raise CollectionError("saved output: no vendor CLI is run")

    collector = SsacliCollector(no_runner, Charge(None),
                                context.config.policy.battery_threshold_percent)
    read_at = time.time()
    result = (CollectorResult(collector.name, True, 0.0, read_at, snapshot)
              if snapshot.error is None
              else CollectorResult(collector.name, False, 0.0, None, None,
                                   f"the saved output is a vendor error: Error: "
                                   f"{snapshot.error.message}"))
    return _render([(collector, result)])


def _render(entries: "list[Entry]") -> tuple[bytes, Failures]:
    from smartarray_agent.exporter.render import MetricSettings, render

    # One collection: every value is served, whatever its age.
    body = render(entries, now=time.time(), settings=MetricSettings(stale_after_s=None))
    return body, [(r.name, r.error) for _, r in entries if not r.success]

