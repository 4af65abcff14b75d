"""Every vendor CLI call of a process goes through one :class:`VendorRunner`.

It takes the host lock (:mod:`.lock`) around each call, never lets two calls run at once,
turns ``Error:`` outputs into :class:`~.errors.VendorCommandError`, and asks again, after a
back-off and within the lock wait, while another instance of the CLI that does not take the
host lock (an administrator's own ``ssacli``) holds the vendor's single-instance lock.

What runs a command is a :class:`Vendor`: the CLI's program as processes
(``discover.VendorCli``: one-shot runs and consoles), or a stand-in in this process (the
agent's ``--simulate``). One rule says how each command runs. It runs in a console, the CLI's
``=> `` session that pays its start-up once, when a console is wanted (inside
:meth:`VendorRunner.session`, a job's block: ``status``, ``check``, a change; or always, with
the opt-in ``console``) and the CLI has one; one-shot otherwise: where no console is wanted,
and where the CLI has none (its console ended before its first prompt: from then on this
runner runs it one-shot, and the debug log says so). A command is run once: one that timed
out (:class:`~.errors.CliTimeout`) would hang again, and one whose console died under it
(:class:`~.errors.ConsoleDied`; :class:`~.errors.ConsoleLost` for one sent ``once``, a
modify) may have done its work. The one exception is the vendor's lock conflict above, which
did nothing. A console that died, timed out, printed more than ``MAX_OUTPUT_BYTES`` or said
``No controllers detected`` (started before the ``sg`` driver was loaded) is closed, and the
next command starts a new one.

A job's console is closed at the end of its block, so the CLI is held no longer than the
job. The opt-in console stays open between calls and, with it, the vendor's single-instance
lock, so every other CLI user is refused while it is open; when another process waits for
the host lock it is closed and the lock let go within a fraction of a second.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from smartarray_agent.collectors.ssacli.errors import (
    CliFailed,
    ConsoleDied,
    ConsoleLost,
    ConsoleUnavailable,
    ParseError,
    SsacliError,
    VendorCommandError,
)
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.parser import find_error, parse
from smartarray_agent.collectors.ssacli.run import CliResult

log = logging.getLogger(__name__)

LOCK_CONFLICT_BACKOFF_S = (0.5, 1.0, 2.0, 4.0)
IDLE_CHECK_S = 0.2


class Console(Protocol):
    """A console of the vendor CLI, started (its banner read), answering one command at a
    time until closed; it closes itself where it fails (session.py says how)."""

    banner: str

    @property
    def alive(self) -> bool: ...

    @property
    def pid(self) -> int | None: ...  # None: no process of its own

    def run(self, command: str, *, confirm: bool = False) -> str: ...

    def close(self) -> None: ...


class Vendor(Protocol):
    """What runs the vendor commands: the CLI's program as processes (``discover.VendorCli``),
    or a stand-in that answers in this process (agent/ wires the simulator so)."""

    @property
    def argv(self) -> tuple[str, ...]: ...  # what names the CLI in messages

    @property
    def name(self) -> str: ...

    def run(self, command: list[str], *, timeout_s: float,
            started: Callable[[int], None] | None = None) -> CliResult: ...

    def console(self, *, timeout_s: float) -> Console: ...


class VendorRunner:
    def __init__(self, cli: Vendor, lock: HostLock, *, timeout_s: float, console: bool) -> None:
        self.cli = cli
        self.lock = lock
        self.timeout_s = timeout_s
        self.console = console  # keep a console open between calls
        self.running: str | None = None  # the vendor command running now (for a timeout)
        self._serial = threading.RLock()  # one vendor call at a time in this process
        self._session: Console | None = None
        self._has_console = True  # until its console ends before its first prompt
        self._holds = 0
        self._jobs = 0  # session() blocks open
        self._version: str | None = None  # "" once asked and not found
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        if console:
            log.warning("the CLI console stays open between calls ([ssacli] console = true): "
                        "every other user of the vendor CLI on this host is refused while it "
                        "is open")

    # -- public ------------------------------------------------------------------
    def run(self, command: list[str], *, confirm: bool = False, once: bool = False) -> str:
        """The output of one vendor command; SsacliError when there is none (a timeout, a
        crash, an ``Error:``, the lock). ``once``: the command is sent at most once (a
        modify)."""
        text = shlex.join(command)
        deadline = time.monotonic() + self.lock.wait_s
        with self.hold():
            alive = self._session is not None and self._session.alive
            self.lock.note(text, self._session.pid if alive and self._session else None)
            for backoff in (*LOCK_CONFLICT_BACKOFF_S, None):
                output = self._run_held(command, confirm=confirm, once=once)
                error = find_error(output)
                if error is None:
                    return output
                if error.kind == "no_controllers":
                    self._close_session()  # a console started before sg: the next is new
                if (error.kind != "lock_conflict" or backoff is None
                        or time.monotonic() + backoff > deadline):
                    raise VendorCommandError(text, error.message, error.kind, error.detail)
                time.sleep(backoff)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the host lock across several calls (read, check, write, re-read)."""
        with self._serial:
            self.lock.acquire()
            self._holds += 1
            try:
                yield
            finally:
                self._holds -= 1
                if self._holds == 0 and not (self._session and self._session.alive):
                    self.lock.release()
                elif self._holds == 0:
                    self._ensure_watcher()

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """A job: hold the lock, and run every call inside in one console opened for the
        block and closed at its end (a runner that keeps its console open keeps it)."""
        with self.hold():
            self._jobs += 1
            try:
                yield
            finally:
                self._jobs -= 1
                if self._jobs == 0 and not self.console:
                    self._close_session()

    def version(self) -> str | None:
        """The CLI's version, from the console's banner or else its ``version`` command, and
        kept once it is an answer that lasts. None when the CLI cannot tell; raises LockError
        only when the host lock is not held already and cannot be taken."""
        if self._version is None:
            with self.hold():
                self._version = self._ask_version()
        return self._version or None

    def close(self) -> None:
        self._stop.set()
        with self._serial:
            self._close_session()
            self.lock.release()
        if self._watcher is not None:
            self._watcher.join(timeout=2)

    # -- inside the lock -----------------------------------------------------------
    def _ask_version(self) -> str | None:
        """The version ("" when the CLI does not tell); None for an answer that may not
        last (a timeout, a crash, an ``Error:``), to ask again next time."""
        session = self._session
        banner = session.banner if session is not None and session.alive else ""
        try:
            text = banner or self._run_held(["version"], confirm=False)
        except SsacliError:
            return None
        if find_error(text) is not None:
            return None
        try:
            return parse(text).cli_version or ""
        except ParseError:
            return ""

    def _run_held(self, command: list[str], *, confirm: bool, once: bool = False) -> str:
        """The module's rule: in the console where one is wanted and the CLI has one, else
        one-shot."""
        self.running = shlex.join(command)
        try:
            if (self.console or self._jobs) and self._has_console:
                try:
                    return self._run_console(command, confirm=confirm, once=once)
                except ConsoleUnavailable as error:
                    log.debug("the CLI has no console (%s): %r and the commands after it "
                              "run one-shot", error, self.running)
                    self._has_console = False
            return self._run_one_shot(command, confirm=confirm)
        finally:
            self.running = None

    def _run_console(self, command: list[str], *, confirm: bool, once: bool) -> str:
        text = shlex.join(command)
        if self._session is None or not self._session.alive:
            self._close_session()
            self._session = self.cli.console(timeout_s=self.timeout_s)
            self.lock.note(text, self._session.pid)
        try:
            return self._session.run(text, confirm=confirm)
        except SsacliError as error:
            self._session = None  # it ended itself: the next command starts a new one
            if once and isinstance(error, ConsoleDied):  # what it did, the re-read says
                raise ConsoleLost(f"{error}: not sent again") from error
            raise

    def _run_one_shot(self, command: list[str], *, confirm: bool) -> str:
        argv = [*command, "forced"] if confirm and "forced" not in command else command
        result = self.cli.run(argv, timeout_s=self.timeout_s,
                              started=lambda pid: self.lock.note(shlex.join(command), pid))
        if result.returncode != 0 and find_error(result.output) is None:
            raise CliFailed(result.argv, result.returncode, result.output)
        return result.output

    def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    # -- letting go when others wait -------------------------------------------------
    def _ensure_watcher(self) -> None:
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(
                target=self._watch, name="ssacli-lock-watcher", daemon=True
            )
            self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(IDLE_CHECK_S):
            if not self.lock.held:
                return
            if not self.lock.others_waiting():
                continue
            if self._serial.acquire(blocking=False):
                try:
                    if self._holds == 0:
                        self._close_session()
                        self.lock.release()
                        return
                finally:
                    self._serial.release()
