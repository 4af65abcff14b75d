"""A persistent console session of the vendor CLI, so its start-up cost is paid once.

The CLI started with no arguments prints a banner and a ``=> `` prompt; each command's
output runs to the next prompt. A ``(y/n)`` confirmation is answered ``y`` only when the
caller asked for it. A session that dies, times out or prints something unexpected is
closed (its whole process group ended) and the error says which; the caller starts a new
one or runs the command one-shot.
"""

from __future__ import annotations

import re
import time

import pexpect

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.processes import end_groups
from smartarray_agent.collectors.ssacli.run import vendor_env

PROMPT = re.compile(r"(?:^|\n)=> ")
CONFIRM = re.compile(r"\(y/n\)\s*$")
TERMINAL = (24, 4000)  # rows, columns: wide, so the CLI never wraps a line for the terminal
READ_CHUNK = 65536
# The prompt ends the output, so only the tail of the buffer is searched for it; searching
# all of a 150 kB answer after every read made a large collection several times slower.
SEARCH_WINDOW = 4096


class SessionError(RuntimeError):
    """The console did not behave: it died, hung, or never showed its prompt."""


class SessionTimeout(SessionError):
    pass


class SessionDied(SessionError):
    pass


class ConsoleSession:
    def __init__(self, cli: VendorCli, *, start_timeout_s: float, command_timeout_s: float):
        self.cli = cli
        self.start_timeout_s = start_timeout_s
        self.command_timeout_s = command_timeout_s
        self._child: pexpect.spawn | None = None
        self.banner = ""  # what the console printed before its first prompt

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.isalive()

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self) -> None:
        program, *args = self.cli.argv
        self._child = pexpect.spawn(
            program, args, env=vendor_env(), echo=False, encoding="utf-8",
            codec_errors="replace", dimensions=TERMINAL, timeout=self.start_timeout_s,
            maxread=READ_CHUNK, searchwindowsize=SEARCH_WINDOW,
        )
        self._child.delaybeforesend = None  # pexpect sleeps 50 ms before each send otherwise
        self.banner = self._read_to_prompt(self.start_timeout_s, confirm=False,
                                           what="the console banner")

    def run(self, command: str, *, confirm: bool = False) -> str:
        """The output of ``command``, CRLF made LF and the echo of the command dropped."""
        if not self.alive:
            self.close()
            self.start()
        assert self._child is not None
        self._child.sendline(command)
        output = self._read_to_prompt(self.command_timeout_s, confirm=confirm, what=command)
        return _without_echo(output, command)

    def close(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.isalive():
            try:
                child.sendline("exit")
                child.expect(pexpect.EOF, timeout=1)
            except (pexpect.TIMEOUT, pexpect.EOF, OSError):
                pass
        end_groups([child.pid])
        child.close(force=True)  # reaps it

    def _read_to_prompt(self, timeout_s: float, *, confirm: bool, what: str) -> str:
        assert self._child is not None
        child = self._child
        parts: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            left = max(0.0, deadline - time.monotonic())
            try:
                index = child.expect([PROMPT, CONFIRM], timeout=left)
            except pexpect.TIMEOUT:
                self.close()
                raise SessionTimeout(
                    f"the CLI console did not answer {what!r} within {timeout_s:g} s"
                ) from None
            except pexpect.EOF:
                tail = (child.before or "").strip().splitlines()[-1:]
                self.close()
                raise SessionDied(
                    f"the CLI console ended during {what!r}"
                    + (f" (last line: {tail[0]!r})" if tail else "")
                ) from None
            parts.append(child.before or "")
            if index == 0:
                return "".join(parts).replace("\r\n", "\n").replace("\r", "\n")
            answer = "y" if confirm else "n"
            parts.append((child.after or "") + answer + "\n")
            child.sendline(answer)


def _without_echo(output: str, command: str) -> str:
    first, _, rest = output.lstrip("\n").partition("\n")
    return rest if first.strip() == command.strip() else output
