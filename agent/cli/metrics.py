"""``smartarray-agent metrics --once | --textfile DIR``: collect once and print the metrics,
or write them for node_exporter's textfile collector."""

import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, fail, usage_error
from smartarray_agent.cli.options import CliPath, ConfigFile, LockFile, Simulate, Timeout

if TYPE_CHECKING:
    from smartarray_agent.config import Config

TEXTFILE_NAME = "smartarray.prom"


def metrics(
    once: Annotated[bool, typer.Option("--once", help="Print the exposition and exit.")] = False,
    textfile: Annotated[Path | None, typer.Option(
        "--textfile", metavar="DIR",
        help=f"Write DIR/{TEXTFILE_NAME} atomically (node_exporter textfile collector) and "
             "exit.")] = None,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: Timeout = None, lock_file: LockFile = None,
) -> None:
    """Collect once and print or write the metrics. Exit 11 when a collector failed (the
    metrics are still written, with smartarray_collector_success 0)."""
    from smartarray_agent.daemon.logs import setup_logging
    from smartarray_agent.vendor import CliUnavailable, vendor_cli

    context = CommandContext(config, simulate, cli, timeout, lock_file)
    if once == (textfile is not None):
        raise usage_error("give exactly one of --once and --textfile DIR")
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


def _collect_and_render(config: "Config") -> tuple[bytes, list[tuple[str, str | None]]]:
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
