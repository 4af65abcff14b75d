"""A time limit on a whole command (``check -t``): SIGALRM raises :class:`TimeUp` in the main
thread wherever the command is, which unwinds as Ctrl-C does (the vendor CLI ended, the host
lock let go), and the command says what timed out."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType


class TimeUp(BaseException):
    """A BaseException, as KeyboardInterrupt, so that no ``except Exception`` catches it."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} timed out after {seconds:g} s")


@contextlib.contextmanager
def deadline(seconds: float, doing: Callable[[], str]) -> Iterator[None]:
    """TimeUp when the block runs past ``seconds``, saying what ``doing`` says was running.
    The main thread only."""

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise TimeUp(doing(), seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
