"""One attempt of one collector, timed, and what the exporter keeps of it.

A failed attempt keeps the data and the time of the last success, so the exporter can go on
serving the last good values until they are too old (docs/agent.md, "Failure and
staleness").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from smartarray_agent.collectors.ssacli.collector import CollectionError
from smartarray_agent.collectors.sysfs import SysfsError

log = logging.getLogger(__name__)


class Collector(Protocol):
    name: str

    def collect(self) -> object: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CollectorResult:
    name: str
    success: bool
    duration_s: float  # of this attempt
    last_success_at: float | None  # Unix time the last successful attempt ended
    data: object | None  # what the last successful attempt returned
    error: str | None = None  # one line: why this attempt failed


def collect_once(
    collector: Collector,
    previous: CollectorResult | None,
    clock: Callable[[], float] = time.time,
) -> CollectorResult:
    """Run ``collector`` once. Never raises: a failure is a result with ``success=False``."""
    started = time.monotonic()
    try:
        data = collector.collect()
    except (CollectionError, SysfsError) as error:
        message = _one_line(error)
    except Exception as error:  # a bug must not stop the agent; it is logged in full
        log.exception("collector %s failed unexpectedly", collector.name)
        message = f"{type(error).__name__}: {_one_line(error)}"
    else:
        return CollectorResult(
            name=collector.name,
            success=True,
            duration_s=time.monotonic() - started,
            last_success_at=clock(),
            data=data,
        )
    return CollectorResult(
        name=collector.name,
        success=False,
        duration_s=time.monotonic() - started,
        last_success_at=previous.last_success_at if previous else None,
        data=previous.data if previous else None,
        error=message,
    )


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
