"""Run a command of the agent in the test's own process, with typer's ``CliRunner``, as a fresh
``smartarray-agent`` process would run it (issue #42): for the tests whose subject is a
command's logic (its options, output, exit code, what it sends to the simulator). A test
whose subject is the process itself (signals, the host lock between processes, the daemon,
the units, privilege separation, the console session, the entry point) runs a real one.

What a process would keep to itself is kept from the test process, and checked:

- the environment is the one given (as ``subprocess.run``'s ``env``: the whole of it), and
  the test's again afterwards; so are the working directory and the logging set-up (a fresh
  process has no handler: a warning goes to stderr, as Python's last resort prints it);
- the signal handlers a command sets are restored by it, and the process's limits and umask
  are unchanged (asserted: one left behind would be the command's bug, in the program too;
  a test that sets the agent's limits, as a full disk would, runs a process: :func:`spawn`);
- the program's entry point (``app.main``) is not run: it is what enables the seccomp filter
  for root (confine.py), which must never confine the test process. Asserted after each
  command (test_isolation.py checks the filter's absence itself);
- a crash is raised in the test, with its traceback, rather than read as exit code 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import runpy
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from typer.core import TyperCommand
from typer.testing import CliRunner

from smartarray_agent.cli.app import app
from smartarray_agent.cli.options import PROG
from smartarray_agent.common import confine

_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)
_LIMITS = (resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE, resource.RLIMIT_CORE)


@dataclass(frozen=True)
class Ran:
    """What a command did: the fields of ``subprocess.CompletedProcess`` the tests read."""

    returncode: int
    stdout: str
    stderr: str


def agent(*args: str | Path, env: Mapping[str, str] | None = None,
          stdin: str | bytes | None = None) -> Ran:
    """``smartarray-agent ARGS`` in this process. ``env``: the whole environment (default:
    this process's); ``stdin``: what the command reads (default: nothing)."""
    handlers = {signum: signal.getsignal(signum) for signum in _HANDLED}
    limits = [resource.getrlimit(limit) for limit in _LIMITS]
    umask = _umask()
    with _fresh_logging(), contextlib.chdir(Path.cwd()):  # back where it was, whatever it does
        result = CliRunner().invoke(app, [str(arg) for arg in args], input=stdin,
                                    env=_changes(env), prog_name=PROG)
    assert not confine._enabled, "the test process must never be confined (confine.py)"
    left = {signum for signum, handler in handlers.items() if signal.getsignal(signum) != handler}
    assert not left, f"the command left its handler for {sorted(left)} in place"
    assert [resource.getrlimit(limit) for limit in _LIMITS] == limits, "a limit changed"
    assert _umask() == umask, "the command changed the umask"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def _umask() -> int:
    mask = os.umask(0o077)  # reading it means setting it: set back at once
    os.umask(mask)
    return mask


def _changes(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """``env`` as CliRunner takes it: what to set, and ``None`` for what to remove."""
    if env is None:
        return None
    return {**{name: None for name in os.environ if name not in env}, **env}


@contextlib.contextmanager
def _fresh_logging() -> Iterator[None]:
    """The root logger of a fresh process during the command (no handler, level WARNING),
    the test's own again afterwards (``metrics`` sets its own handler, as ``run`` does)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers[:] = []
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def spawn(*args: str | Path, env: Mapping[str, str] | None = None,
          stdin: str | None = None) -> Ran:
    """``smartarray-agent ARGS`` as a process of its own, for a test whose subject is the
    process (its limits, its signals)."""
    done = subprocess.run([sys.executable, "-m", "smartarray_agent", *map(str, args)],
                          input=stdin or "", capture_output=True, text=True, env=env,
                          timeout=120)
    return Ran(done.returncode, done.stdout, done.stderr)


def commands() -> list[tuple[list[str], TyperCommand]]:
    """Every command with the words that name it, in ``--help``'s order: the walk that writes
    the manual page (packaging/manpage.py), which the product does not need."""
    manpage = Path(__file__).resolve().parents[1] / "packaging" / "manpage.py"
    return list(runpy.run_path(str(manpage))["commands"]())
