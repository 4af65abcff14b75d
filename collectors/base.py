"""What every collector is (docs/layout.md says how one is added); a failed
attempt keeps the last success's data (docs/agent.md, "Failure and staleness")."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from prometheus_client.core import Metric

log = logging.getLogger(__name__)

T = TypeVar("T")


class CollectionError(RuntimeError):
    """A collection failed for a reason outside the agent; the message says why in a line."""


class Collector(Protocol[T]):
    """A subclass inherits the defaults of ``changes_at``, ``watch`` and ``close``."""

    name: str
    # How often it runs, when slower than every round (the iLO is slow); None: every round.
    interval_s: float | None

    def collect(self) -> T:  # raises CollectionError
        ...

    def families(self, data: T, now: float) -> Iterable[Metric]:  # as they stand at now
        ...

    def changes_at(self, data: T) -> float | None:
        """When ``data``'s families change without a collection (an iLO charge expires)."""
        return None

    def summary(self, data: T) -> str:  # for logs and STATUS=: "2 controllers"
        ...

    def watch(self, poke: Callable[[], None]) -> None:  # poke: collect early (udev)
        return None

    def close(self) -> None:  # let go of a console, a monitor
        return None


@dataclass(frozen=True)
class CollectorResult(Generic[T]):
    name: str
    success: bool
    duration_s: float  # of this attempt
    last_success_at: float | None  # Unix time the last successful attempt ended, to be shown
    data: T | None  # what the last successful attempt returned
    error: str | None = None  # one line: why this attempt failed
    # the same moment on the monotonic clock, which the data's age is judged on: a step of
    # the wall clock (NTP, date -s) must neither keep old data nor drop new
    last_success_monotonic: float | None = None


AnyCollector = Collector[Any]


def collect_once(
    collector: Collector[T],
    previous: CollectorResult[T] | None,
    clock: Callable[[], float] = time.time,
) -> CollectorResult[T]:
    """Run ``collector`` once; a failure is a result with ``success=False``, never raised."""
    started = time.monotonic()
    try:
        data = collector.collect()
    except CollectionError as error:
        message = _one_line(error)
    except Exception as error:  # a bug must not stop the agent; it is logged in full
        log.exception("collector %s failed unexpectedly", collector.name)
        message = f"{type(error).__name__}: {_one_line(error)}"
    else:
        ended = time.monotonic()
        return CollectorResult(collector.name, True, ended - started, clock(), data,
                               last_success_monotonic=ended)
    if previous is None:
        return CollectorResult(collector.name, False, time.monotonic() - started, None, None,
                               message)
    return CollectorResult(collector.name, False, time.monotonic() - started,
                           previous.last_success_at, previous.data, message,
                           previous.last_success_monotonic)


def _one_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
