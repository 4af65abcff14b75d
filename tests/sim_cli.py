"""Run the simulator's program (``smartarray-sim``) in the test's own process, its ``main``
with its standard streams swapped for buffers, as tests/agent_cli.py runs the agent's: for
the tests whose subject is what it answers and keeps (output, exit code, state, log). A
hang, a delay, a console's terminal, a signal or a second instance at once run the program
as a process."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from smartarray_agent.simulator import cli

from .agent_cli import Ran

_HANDLED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def sim(*argv: str | Path, stdin: str = "", env: Mapping[str, str] | None = None) -> Ran:
    """``smartarray-sim ARGV``: its exit code and what it printed. ``env``: the whole
    environment it sees (default: this process's); its signal handlers are put back."""
    code, out, err = sim_bytes(*argv, stdin=stdin, env=env)
    return Ran(code, out.decode(), err)


def sim_bytes(*argv: str | Path, stdin: str = "", env: Mapping[str, str] | None = None,
              ) -> tuple[int, bytes, str]:
    """As :func:`sim`, its standard output as the bytes it wrote."""
    handlers = {signum: signal.getsignal(signum) for signum in _HANDLED}
    environ = os.environ.copy()
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err), \
                _stdin(stdin):
            try:
                code = cli.main([str(arg) for arg in argv])
            except SystemExit as stop:  # argparse's usage errors
                code = stop.code if isinstance(stop.code, int) else 1
        stdout.flush()
    finally:
        os.environ.clear()
        os.environ.update(environ)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _stdin(text: str):
    saved, sys.stdin = sys.stdin, io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved
