"""A time limit on a whole command (``check -t``). When it is up, SIGALRM raises
:class:`TimeUp` in the main thread wherever the command is: waiting for the host lock, reading
the vendor CLI, parsing. It unwinds as Ctrl-C and SIGTERM do (cli/app.py): the one-shot run
ends the vendor CLI's process group on its way out (collectors/ssacli/run.py), the host lock
is let go, and the command reports what timed out."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType


class TimeUp(BaseException):
    """The time is up. A BaseException, as KeyboardInterrupt is, so that no ``except
    Exception`` on the way takes it for an error of its own and goes on."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} timed out after {seconds:g} s")


@contextlib.contextmanager
def deadline(seconds: float, doing: Callable[[], str]) -> Iterator[None]:
    """Raise TimeUp when the block runs longer than ``seconds``; ``doing`` says, when the
    time is up, what was running. The main thread only (signals go there)."""

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise TimeUp(doing(), seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
