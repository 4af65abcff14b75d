"""Hold off SIGINT, SIGTERM and SIGHUP while a change is being sent.

The one-shot vendor CLI runs in its own session, so a signal to our process group never
reaches it: if we died it would finish the change unrecorded. Held off, the signal waits
until the CLI has ended (at the latest at ``--timeout``, when it is killed) and the outcome
is on record; the caller then says that it was interrupted. Before the change is armed (its
intent about to be recorded) nothing is sent yet, and a signal does what it did before the
block: Ctrl-C at a read that hangs stops the command at once (exit 130), not at the timeout.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Held(list[int]):
    """The signals held so far, in order; none until :meth:`arm`."""

    armed = False

    def arm(self) -> None:
        """From now on, hold the signals (the change is about to be sent)."""
        self.armed = True


@contextlib.contextmanager
def held() -> Iterator[Held]:
    """The signals that arrived inside the block once it was armed. Only the main thread can
    handle signals; elsewhere (the daemon's guard) nothing is held."""
    received = Held()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous: dict[int, signal.Handlers | object] = {}

    def handle(signum: int, frame: FrameType | None) -> None:
        if received.armed:
            received.append(signum)
        else:
            _as_before(previous[signum], signum, frame)

    previous.update({signum: signal.signal(signum, handle) for signum in HELD})
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def _as_before(handler: object, signum: int, frame: FrameType | None) -> None:
    """What ``handler``, the one in place before the block, does with ``signum``."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
