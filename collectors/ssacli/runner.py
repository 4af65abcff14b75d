"""Every vendor CLI call of a process goes through one :class:`VendorRunner`.

It takes the host lock (:mod:`.lock`) around each call, never lets two calls run at once,
runs commands one-shot (:mod:`.run`) or, opt-in, in a console session (:mod:`.session`)
kept open between calls, turns ``Error:`` outputs into :class:`~.errors.VendorCommandError`,
and retries while another, non-cooperating instance of the CLI holds the vendor's own lock.

One-shot (the default): the CLI runs only while a caller holds the lock, so between
collections it is free for anyone else on the host. :meth:`VendorRunner.session` runs the
calls of one job (a change, ``status``) in one console opened for it and closed at its end:
the job pays the CLI's start-up once and holds the CLI no longer than itself. The opt-in
console (``console``) pays the start-up once, but its open session holds the vendor's
single-instance lock, so every other CLI user is refused while it is open; when another
process waits for the host lock the session is closed and the lock let go within a fraction
of a second. A session that dies mid-command is restarted once, unless the command was to be
sent ``once`` (a modify: :class:`ConsoleLost`, never sent again); a console that cannot be
started or misbehaves again makes the runner fall back to one-shot runs for the rest of the
``session()``, else for the next few calls, and the debug log says so. A command that hangs
is killed at the timeout with its process group and reported as :class:`~.run.CliTimeout`,
never retried (it would hang again); one that prints more than ``MAX_OUTPUT_BYTES`` is ended
the same way and reported as :class:`~.run.CliOutputTooLarge`, console or not, and a
console's next call starts a new one.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import ParseError, SsacliError, VendorCommandError
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.parser import find_error, parse
from smartarray_agent.collectors.ssacli.run import (
    CliFailed,
    CliOutputTooLarge,
    CliTimeout,
    run_once,
)
from smartarray_agent.collectors.ssacli.session import (
    ConsoleSession,
    SessionDied,
    SessionError,
    SessionOutputTooLarge,
    SessionTimeout,
)
from smartarray_agent.collectors.ssacli.versions import VersionCache

log = logging.getLogger(__name__)

LOCK_CONFLICT_BACKOFF_S = (0.5, 1.0, 2.0, 4.0)
CONSOLE_COOLDOWN_CALLS = 5  # one-shot calls after the console failed, before trying again
IDLE_CHECK_S = 0.2


@dataclass
class RunnerStats:
    process_starts: int = 0  # vendor CLI processes started (one-shot runs and consoles)
    commands: int = 0  # commands answered, console or one-shot
    console_fallbacks: int = 0


class ConsoleLost(SessionError):
    """The console ended during a command sent ``once``: what it did is not known, and it
    is not sent again."""


class VendorRunner:
    def __init__(
        self,
        cli: VendorCli,
        lock: HostLock,
        *,
        timeout_s: float,
        console: bool,
        start_timeout_s: float | None = None,
        versions: VersionCache | None = None,
    ) -> None:
        self.cli = cli
        self.lock = lock
        self.timeout_s = timeout_s
        self.console = console
        self.start_timeout_s = start_timeout_s or timeout_s
        self.versions = versions  # the CLI's version as earlier processes found it
        self.running: str | None = None  # the vendor command running now (for a timeout)
        self.stats = RunnerStats()
        self._serial = threading.RLock()  # one vendor call at a time in this process
        self._session: ConsoleSession | None = None
        self._cooldown = 0
        self._holds = 0
        self._scopes = 0  # session() blocks open
        self._scope_one_shot = False  # the console failed in this session(): one-shot runs
        self._version: str | None = None  # "" once asked and not found
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- public ------------------------------------------------------------------
    def run(self, command: list[str], *, confirm: bool = False, once: bool = False) -> str:
        """The output of one vendor command. Raises SsacliError: VendorCommandError on
        ``Error:``, CliTimeout, CliFailed (a crash), LockError, or the base when the CLI
        cannot run.
        ``once``: the command is sent at most once (a modify): a console that ends during
        it raises ConsoleLost, and it is not sent again in a new console or one-shot."""
        text = shlex.join(command)
        deadline = time.monotonic() + self.lock.wait_s
        with self.hold():
            console = self._session.pid if self._session and self._session.alive else None
            self.lock.note(text, console)
            restarted = False
            for backoff in (*LOCK_CONFLICT_BACKOFF_S, None):
                output = self._run_held(command, confirm=confirm, once=once)
                error = find_error(output)
                if error is None:
                    return output
                if (error.kind == "no_controllers" and not restarted and not once
                        and self._session is not None):
                    # A console started before the driver (sg) was loaded keeps saying so:
                    # a new one sees the controllers; once, then the error stands.
                    restarted = True
                    self._close_session()
                    continue
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
        """Hold the lock, and run every call inside in one console session opened for the
        block and closed at its end (a runner that keeps its console open between calls
        keeps it). Where the console cannot be had, the calls run one-shot."""
        with self.hold():
            self._scopes += 1
            try:
                yield
            finally:
                self._scopes -= 1
                if self._scopes == 0:
                    self._scope_one_shot = False
                    if not self.console:
                        self._close_session()

    def version(self) -> str | None:
        """The CLI's version, read once: remembered by an earlier process (``versions``),
        else from the console's banner or the CLI's ``version`` command, and then remembered.
        None when the CLI cannot tell; raises LockError only when the host lock is not held
        already and cannot be taken."""
        if self._version is None and self.versions is not None:
            self._version = self.versions.get(self.cli.argv)
        if self._version is None:
            with self.hold():
                self._version, lasting = self._ask_version()
            if lasting and self.versions is not None:
                self.versions.put(self.cli.argv, self._version)
        return self._version or None

    def close(self) -> None:
        self._stop.set()
        with self._serial:
            self._close_session()
            self.lock.release()
        if self._watcher is not None:
            self._watcher.join(timeout=2)

    # -- inside the lock -----------------------------------------------------------
    def _ask_version(self) -> tuple[str, bool]:
        """The version ("" when the CLI does not tell), and whether that answer lasts as
        long as the CLI's files do: a timeout, a crash or an ``Error:`` may not recur."""
        session = self._session
        banner = session.banner if session is not None and session.alive else ""
        try:
            text = banner or self._run_held(["version"], confirm=False)
        except SsacliError:
            return "", False
        if find_error(text) is not None:
            return "", False
        try:
            return parse(text).cli_version or "", True
        except ParseError:
            return "", True

    def _run_held(self, command: list[str], *, confirm: bool, once: bool = False) -> str:
        self.running = shlex.join(command)
        try:
            console = (self.console or self._scopes > 0) and not self._scope_one_shot
            if console and self._cooldown == 0:
                try:
                    return self._run_console(command, confirm=confirm, once=once)
                except SessionTimeout as error:
                    raise CliTimeout([*self.cli.argv, *command], self.timeout_s) from error
                except SessionOutputTooLarge as error:  # the next call starts a new console
                    self._close_session()
                    raise CliOutputTooLarge([*self.cli.argv, *command], error.limit) from error
                except ConsoleLost:
                    self._fall_back()
                    raise
                except (SessionError, OSError) as error:
                    log.debug("the CLI console failed (%s): %r runs one-shot", error,
                              self.running)
                    self._fall_back()
            elif self._cooldown and not self._scopes:
                self._cooldown -= 1
            return self._run_one_shot(command, confirm=confirm)
        finally:
            self.running = None

    def _fall_back(self) -> None:
        """The console failed: one-shot runs for the rest of a session(), else for the
        next few calls."""
        self.stats.console_fallbacks += 1
        if self._scopes:
            self._scope_one_shot = True
        else:
            self._cooldown = CONSOLE_COOLDOWN_CALLS

    def _run_console(self, command: list[str], *, confirm: bool, once: bool) -> str:
        text = shlex.join(command)
        for attempt in (1, 2):
            if self._session is None or not self._session.alive:
                if self.console and self.stats.process_starts == 0:
                    log.warning("the CLI console stays open between calls ([ssacli] console = "
                                "true): every other user of the vendor CLI on this host is "
                                "refused while it is open")
                self._session = ConsoleSession(
                    self.cli,
                    start_timeout_s=self.start_timeout_s,
                    command_timeout_s=self.timeout_s,
                )
                self.stats.process_starts += 1
                try:
                    self._session.start()
                except SessionError as error:  # nothing sent yet: one-shot runs may do
                    self._close_session()
                    raise SessionError(f"the CLI console could not be had: {error}") from None
                self.lock.note("console", self._session.pid)
            try:
                output = self._session.run(text, confirm=confirm)
            except (SessionDied, OSError) as error:
                self._close_session()
                if once:  # it may have been applied: never sent again
                    raise ConsoleLost(f"{error}: not sent again") from error
                if attempt == 2:
                    raise
                continue
            self.stats.commands += 1
            return output
        raise AssertionError("unreachable")

    def _run_one_shot(self, command: list[str], *, confirm: bool) -> str:
        argv = [*command, "forced"] if confirm and "forced" not in command else command
        self.stats.process_starts += 1
        result = run_once(self.cli, argv, timeout_s=self.timeout_s,
                          started=lambda pid: self.lock.note(shlex.join(command), pid))
        self.stats.commands += 1
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
