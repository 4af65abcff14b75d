"""A persistent console session of the vendor CLI, so its start-up cost is paid once.

The CLI started with no arguments prints a banner and a ``=> `` prompt; each command's
output runs to the next prompt. A ``(y/n)`` confirmation is answered ``y`` only when the
caller asked for it. A session that dies, times out or prints something unexpected is
closed (its whole process group ended) and the error says which; the caller starts a new
one or runs the command one-shot. Like a one-shot run, one answer may be at most
``MAX_OUTPUT_BYTES``: a console that prints more is ended and nothing of it is kept.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass

import pexpect

from smartarray_agent.collectors.ssacli import run
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.collectors.ssacli.processes import end_groups, terminal_holders
from smartarray_agent.collectors.ssacli.run import vendor_env
from smartarray_agent.common.confine import confine_root

# The prompt (the answer is searched from a line start, see _Answer), or a (y/n) question;
# where both match at one place, the prompt
PROMPT_OR_QUESTION = re.compile(r"(?P<prompt>\n=> )|\(y/n\)\s*$")
TERMINAL = (24, 4000)  # rows, columns: wide, so the CLI never wraps a line for the terminal
READ_CHUNK = 65536
# The prompt ends the output, so only the tail of the buffer is searched for it; searching
# all of a 150 kB answer after every read made a large collection several times slower.
SEARCH_WINDOW = 4096


class SessionError(SsacliError):
    """The console did not behave: it died, hung, or never showed its prompt."""


class SessionTimeout(SessionError):
    pass


class SessionDied(SessionError):
    pass


class SessionOutputTooLarge(SessionError):
    """The console printed more than ``MAX_OUTPUT_BYTES`` for one command: it was ended and
    nothing of the answer is kept."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"the CLI console printed more than {limit // 2**20} MiB for "
                         f"{what!r} and was ended (MAX_OUTPUT_BYTES)")
        self.limit = limit


class ConsoleSession:
    def __init__(self, cli: VendorCli, *, start_timeout_s: float, command_timeout_s: float):
        self.cli = cli
        self.start_timeout_s = start_timeout_s
        self.command_timeout_s = command_timeout_s
        self._child: pexpect.spawn | None = None
        self.banner = ""  # what the console printed before its first prompt
        self._pending = ""  # printed after a prompt, before the next command was sent
        self.ended = ""  # how the last console ended ("exited 134"), once closed

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.isalive()

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self) -> None:
        program, *args = self.cli.argv
        confine_root()  # the CLI inherits the filter
        try:
            self._child = pexpect.spawn(
                program, args, env=vendor_env(), echo=False, encoding="utf-8",
                codec_errors="replace", dimensions=TERMINAL, timeout=self.start_timeout_s,
                maxread=READ_CHUNK,
            )
        except pexpect.ExceptionPexpect as error:  # not found, or not executable
            raise SessionError(f"the CLI console could not be started: {error}") from None
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
        with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF, OSError):
            if child.isalive():
                child.sendline("exit")
                child.expect(pexpect.EOF, timeout=1)
        end_groups([child.pid])
        with contextlib.suppress(OSError, StopIteration):  # what still holds its terminal: a
            end_groups(terminal_holders(child.child_fd))  # grandchild in a session of its own
        child.close(force=True)  # reaps it
        self.ended = (f"exited {child.exitstatus}" if child.exitstatus is not None
                      else f"was killed by signal {child.signalstatus}")

    def _read_to_prompt(self, timeout_s: float, *, confirm: bool, what: str) -> str:
        assert self._child is not None
        child = self._child
        limit = run.MAX_OUTPUT_BYTES
        answer = _Answer(limit)
        data, self._pending = self._pending, ""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                found = answer.add(data)
            except _TooLarge:
                self.close()
                raise SessionOutputTooLarge(what, limit) from None
            if found is not None and found.prompt:
                self._pending = found.after
                return found.before.replace("\r\n", "\n").replace("\r", "\n")
            if found is not None:  # a (y/n) question
                reply = "y" if confirm else "n"
                child.sendline(reply)
                data = reply + "\n"
                continue
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise pexpect.TIMEOUT("deadline passed")
                data = child.read_nonblocking(READ_CHUNK, timeout=left)
            except pexpect.TIMEOUT:
                self.close()
                raise SessionTimeout(
                    f"the CLI console did not answer {what!r} within {timeout_s:g} s"
                ) from None
            except pexpect.EOF:
                tail = answer.last_line()
                self.close()
                raise SessionDied(
                    f"the CLI console {self.ended or 'ended'} during {what!r}"
                    + (f" (last line: {tail!r})" if tail else "")
                ) from None


class _TooLarge(Exception):
    pass


@dataclass(frozen=True)
class _Found:
    prompt: bool  # the prompt; else a (y/n) question
    before: str  # all the answer printed before the prompt
    after: str  # what followed the prompt, kept for the next answer


class _Answer:
    """What the console printed for one command: kept whole, counted against the cap, and
    searched for the prompt or a question only near its end."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0  # bytes, as the CLI printed them
        self.length = 0  # characters
        self.tail = "\n"  # the last SEARCH_WINDOW characters; a line starts where it begins

    def add(self, data: str) -> _Found | None:
        """Take ``data``; the prompt or question it completes, if any. _TooLarge past the cap."""
        if not data:
            return None
        self.size += len(data.encode(errors="replace"))
        if self.size > self.limit:
            self.parts.clear()
            raise _TooLarge
        region = self.tail + data
        offset = self.length - len(self.tail)  # where region starts in the answer
        self.parts.append(data)
        self.length += len(data)
        self.tail = region[-SEARCH_WINDOW:]
        match = PROMPT_OR_QUESTION.search(region)
        if match is None:
            return None
        if match.lastgroup != "prompt":
            return _Found(prompt=False, before="", after="")
        whole = "".join(self.parts)
        return _Found(prompt=True, before=whole[: max(0, offset + match.start())],
                      after=whole[offset + match.end():])

    def last_line(self) -> str:
        return (self.tail.strip().splitlines() or [""])[-1]


def _without_echo(output: str, command: str) -> str:
    first, _, rest = output.lstrip("\n").partition("\n")
    return rest if first.strip() == command.strip() else output
