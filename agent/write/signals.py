"""Hold off SIGINT, SIGTERM and SIGHUP while a change is being sent.

The one-shot vendor CLI runs in its own session, so a signal to our process group never
reaches it: if we died it would finish the change unrecorded. Held off, the signal waits
until the CLI has ended (at the latest at ``--timeout``, when it is killed) and the outcome
is on record; the caller then says that it was interrupted.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def held() -> Iterator[list[int]]:
    """The signals that arrived inside the block, in order. Only the main thread can
    handle signals; elsewhere (the daemon's guard) nothing is held."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {signum: signal.signal(signum, lambda signum, frame: received.append(signum))
                for signum in HELD}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
