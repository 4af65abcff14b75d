"""A program in a terminal of its own, for the tests whose subject is the terminal: a question
answered, Ctrl-C, a hang-up, a signal while the program waits. Started with posix_spawn in a
new session that opens the pty as its controlling terminal, as the agent starts the vendor
CLI's console (collectors/ssacli/session.py), not with pexpect.spawn's fork of the test's
process: an xdist worker has threads, and forking one may deadlock the child (Python 3.13
warns of it)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import termios
from collections.abc import Mapping, Sequence

from pexpect.fdpexpect import fdspawn

from smartarray_agent.collectors.ssacli.processes import terminal_streams

# Exec'd in the child's place with SIGINT ignored: the disposition a harness started in the
# background of a non-interactive shell passes on (posix_spawn can reset one, not ignore it).
_IGNORING_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                    "os.execvp(sys.argv[1], sys.argv[1:])")


class Terminal(fdspawn):
    """``argv`` in the foreground of a pty, as an interactive shell starts it (SIGINT at its
    default unless ``sigint_ignored``); pexpect reads and writes the pty's master."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 timeout: float = 30, sigint_ignored: bool = False) -> None:
        if sigint_ignored:
            argv = [sys.executable, "-c", _IGNORING_SIGINT, *argv]
        master, slave = os.openpty()
        try:
            self.pid = os.posix_spawn(
                shutil.which(argv[0]) or argv[0], list(argv),
                dict(os.environ if env is None else env), setsid=True,
                setsigdef=(signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE),
                file_actions=terminal_streams(slave))
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)  # the child opened its own: the master sees its end
        super().__init__(master, timeout=timeout, encoding="utf-8", use_poll=True)
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None

    def _control(self, which: int) -> None:
        self.send(termios.tcgetattr(self.child_fd)[6][which].decode())

    def sendintr(self) -> None:
        """Ctrl-C: the terminal sends SIGINT to its foreground process group."""
        self._control(termios.VINTR)

    def sendeof(self) -> None:
        """Ctrl-D at the start of a line: the program reads the end of its input."""
        self._control(termios.VEOF)

    def kill(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def isalive(self) -> bool:
        return self.exitstatus is None and self.signalstatus is None and not self._reap(block=False)

    def wait(self) -> int | None:
        """The exit status, once the program has ended."""
        if self.isalive():
            self._reap(block=True)
        return self.exitstatus

    def close(self) -> None:
        """The master closed (a program still running sees a hang-up), and the program reaped."""
        super().close()
        self.wait()

    def _reap(self, *, block: bool) -> bool:
        pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        if os.WIFSIGNALED(status):
            self.signalstatus = os.WTERMSIG(status)
        else:
            self.exitstatus = os.waitstatus_to_exitcode(status)
        return True
