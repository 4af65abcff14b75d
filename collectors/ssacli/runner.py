"""Every vendor CLI call of a process goes through one :class:`VendorRunner`, one at a time.

Every call runs in a job (:meth:`VendorRunner.session`: a collection, ``status``, ``check``,
a change; a call outside one is a job of its own): the host lock (:mod:`.lock`) and one
console, the CLI's ``=> `` session, opened for the job and closed at its end, so that the CLI
is held no longer than the job. A CLI whose console ends before its first prompt has none:
its commands run one-shot from then on (the debug log says so). A command is sent once (one
that timed out would hang again; one whose console died may have done its work), but for
the vendor's lock conflict with a CLI that does not take the host lock (an administrator's
own ``ssacli``), which did nothing: that one is asked again after a back-off, within the lock
wait. A console that failed, or said ``No controllers detected`` (started before the ``sg``
driver was loaded), is closed; the next command starts a new one.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import threading
import time
from collections.abc import Iterator

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import (
    CliFailed,
    ConsoleUnavailable,
    ParseError,
    SsacliError,
    VendorCommandError,
)
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.parser import find_error, parse
from smartarray_agent.collectors.ssacli.session import Console

log = logging.getLogger(__name__)

LOCK_CONFLICT_BACKOFF_S = (0.5, 1.0, 2.0, 4.0)


class VendorRunner:
    def __init__(self, cli: VendorCli, lock: HostLock, *, timeout_s: float) -> None:
        self.cli = cli
        self.lock = lock
        self.timeout_s = timeout_s
        self.running: str | None = None  # the vendor command running now (for a timeout)
        self._serial = threading.RLock()  # one job at a time in this process
        self._jobs = 0  # session() blocks open
        self._console: Console | None = None  # the job's
        self._has_console = True  # until its console ends before its first prompt
        self._version: str | None = None  # "" once asked and not found

    def run(self, command: list[str], *, confirm: bool = False) -> str:
        """The output of one vendor command; SsacliError when there is none (a timeout, a
        crash, an ``Error:``, the lock)."""
        deadline = time.monotonic() + self.lock.wait_s
        with self.session():
            for backoff in (*LOCK_CONFLICT_BACKOFF_S, None):
                output = self._run_held(command, confirm=confirm)
                error = find_error(output)
                if error is None:
                    return output
                if error.kind == "no_controllers":
                    self._close_console()  # one started before sg: the next is new
                if (error.kind != "lock_conflict" or backoff is None
                        or time.monotonic() + backoff > deadline):
                    raise VendorCommandError(shlex.join(command), error.message, error.kind,
                                             error.detail)
                time.sleep(backoff)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """A job: the host lock and one console for every call inside, let go at its end."""
        with self._serial:
            self.lock.acquire()
            self._jobs += 1
            try:
                yield
            finally:
                self._jobs -= 1
                if not self._jobs:
                    self._close_console()
                    self.lock.release()

    def version(self) -> str | None:
        """The CLI's version, from the console's banner or its ``version`` command; None when
        the CLI cannot tell."""
        if self._version is None:
            with self.session():
                self._version = self._ask_version()
        return self._version or None

    def _ask_version(self) -> str | None:
        """The version, "" when the CLI does not tell; None, to ask again next time, for an
        answer that may not last (a timeout, a crash, an ``Error:``)."""
        try:
            console = self._open_console()
            text = (console.banner if console else "") or self._run_held(["version"])
        except SsacliError:
            return None
        if find_error(text) is not None:
            return None
        try:
            return parse(text).cli_version or ""
        except ParseError:
            return ""

    def _run_held(self, command: list[str], *, confirm: bool = False) -> str:
        self.running = text = shlex.join(command)
        try:
            console = self._open_console()
            if console is None:
                return self._run_one_shot(command, confirm=confirm)
            self.lock.note(text, console.pid)
            try:
                return console.run(text, confirm=confirm)
            except SsacliError:
                self._console = None  # it ended itself: the next command starts a new one
                raise
        finally:
            self.running = None

    def _open_console(self) -> Console | None:
        """The job's console, started if need be; None where the CLI has none."""
        if self._has_console and not (self._console and self._console.alive):
            self._close_console()
            try:
                self._console = self.cli.console(timeout_s=self.timeout_s)
            except ConsoleUnavailable as error:
                log.debug("the CLI has no console (%s): it runs one-shot", error)
                self._has_console = False
        return self._console

    def _run_one_shot(self, command: list[str], *, confirm: bool) -> str:
        argv = [*command, "forced"] if confirm and "forced" not in command else command
        result = self.cli.run(argv, timeout_s=self.timeout_s,
                              started=lambda pid: self.lock.note(shlex.join(command), pid))
        if result.returncode != 0 and find_error(result.output) is None:
            raise CliFailed(result.argv, result.returncode, result.output)
        return result.output

    def _close_console(self) -> None:
        console, self._console = self._console, None
        if console is not None:
            console.close()
