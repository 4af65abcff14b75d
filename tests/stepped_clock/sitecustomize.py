"""A wall clock that can be stepped, for a test's agent process: with this folder on
``PYTHONPATH`` and ``SMARTARRAY_TEST_CLOCK_STEP`` naming a file, ``time.time()`` answers that
file's number of seconds earlier than the system's clock, as after ``date -s`` or an NTP
step, while the monotonic clock runs on. Loaded by ``site`` before anything else, so every
``time.time`` the agent binds (a default argument too) is this one; the machine's clock is
never touched."""

import os
import time

_STEP_FILE = os.environ.get("SMARTARRAY_TEST_CLOCK_STEP")
_system_time = time.time


def _stepped_time() -> float:
    try:
        with open(_STEP_FILE, encoding="ascii") as step:  # type: ignore[arg-type]
            return _system_time() - float(step.read() or 0)
    except (OSError, ValueError):
        return _system_time()


if _STEP_FILE:
    time.time = _stepped_time
