"""Hold off SIGINT, SIGTERM and SIGHUP while a change is being sent.

The one-shot vendor CLI runs in its own session, so a signal to our process group never
reaches it: if we died it would finish the change unrecorded. Held off, the signal waits
until the CLI has ended (at the latest at ``--timeout``, when it is killed) and the outcome
is on record; the caller then says that it was interrupted. Until the change is armed (its
intent about to be recorded) nothing is sent, and the handlers in place do what they do:
Ctrl-C at a read that hangs stops the command at once (exit 130), not at the timeout.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Held(list[int]):
    """The signals held so far, in order; none until :meth:`arm`."""

    def __init__(self) -> None:
        super().__init__()
        self.previous: dict[int, signal.Handlers | object] = {}

    def arm(self) -> None:
        """From now on, hold the signals (the change is about to be sent). Only the main
        thread can handle signals; elsewhere (the daemon's guard) nothing is held."""
        if not self.previous and threading.current_thread() is threading.main_thread():
            self.previous = {signum: signal.signal(signum, lambda got, _: self.append(got))
                             for signum in HELD}


@contextlib.contextmanager
def held() -> Iterator[Held]:
    """The signals that arrived inside the block once it was armed; the handlers that were
    in place before it are put back at its end."""
    received = Held()
    try:
        yield received
    finally:
        for signum, handler in received.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
