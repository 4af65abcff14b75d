"""A console session of the vendor CLI, so that a job pays the CLI's start-up once.

The CLI started with no arguments prints a banner and a ``=> `` prompt; each command's
output runs to the next prompt. A ``(y/n)`` question is answered ``y`` only when the caller
asked for it. The console is a child process started by :func:`.processes.start` (the
subprocess module's spawn, which runs no Python code between fork and exec, so a process
with threads starts it safely) with a pseudo-terminal as its standard input and output, and
pexpect reads and writes the terminal's master (``fdspawn``). The terminal is not the CLI's
controlling terminal: making it one takes code in the child before exec.

A console that ends before its first prompt raises ConsoleUnavailable; one that ends during a
command ConsoleDied; one that does not answer in time CliTimeout; one that prints more than
``MAX_OUTPUT_BYTES`` for a command CliOutputTooLarge. Each of them is closed first: ended
with what it left behind (:func:`.processes.finish`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import struct
import termios
import time
from dataclasses import dataclass

import pexpect
from pexpect.fdpexpect import fdspawn

from smartarray_agent.collectors.ssacli import processes, run
from smartarray_agent.collectors.ssacli.errors import (
    CliOutputTooLarge,
    CliTimeout,
    ConsoleDied,
    ConsoleUnavailable,
)

# The prompt (the answer is searched from a line start, see _Answer), or a (y/n) question;
# where both match at one place, the prompt
PROMPT_OR_QUESTION = re.compile(r"(?P<prompt>\n=> )|\(y/n\)\s*$")
TERMINAL = (24, 4000)  # rows, columns: wide, so the CLI never wraps a line for the terminal
READ_CHUNK = 65536
# The prompt ends the output, so only the tail of the buffer is searched for it; searching
# all of a 150 kB answer after every read made a large collection several times slower.
SEARCH_WINDOW = 4096


class ConsoleSession:
    def __init__(self, program: tuple[str, ...], *, timeout_s: float) -> None:
        self.program = program
        self.timeout_s = timeout_s  # for the banner, and for each command
        self._call: processes.Call | None = None
        self._child: fdspawn | None = None
        self.banner = ""  # what the console printed before its first prompt
        self._pending = ""  # printed after a prompt, before the next command was sent

    @property
    def alive(self) -> bool:
        return self._call is not None and not processes.exited(self._call)

    @property
    def pid(self) -> int | None:
        return self._call.process.pid if self._call is not None else None

    def start(self) -> None:
        master, terminal = os.openpty()
        try:
            attributes = termios.tcgetattr(terminal)
            attributes[3] &= ~termios.ECHO  # lflag: the CLI's input is not echoed back
            termios.tcsetattr(terminal, termios.TCSANOW, attributes)
            fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", *TERMINAL, 0, 0))
            self._call = processes.start(self.program, stdin=terminal, stdout=terminal,
                                         stderr=terminal)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(terminal)  # the CLI's: the master sees the end of file when it ends
        self._child = fdspawn(master, encoding="utf-8", codec_errors="replace",
                                      maxread=READ_CHUNK, use_poll=True)
        self._child.delaybeforesend = None  # pexpect sleeps 50 ms before each send otherwise
        try:
            self.banner = self._read_to_prompt(None, confirm=False)
        except ConsoleDied as error:
            raise ConsoleUnavailable(str(error)) from None
        except BaseException:  # a deadline's, a signal's: the console must not outlive it
            self._end()
            raise

    def run(self, command: str, *, confirm: bool = False) -> str:
        """The output of ``command``, CRLF made LF and the echo of the command dropped."""
        return _without_echo(self._read_to_prompt(command, confirm=confirm), command)

    def close(self) -> None:
        """Ask the console to exit, then end it and what it left."""
        if self._child is not None and self._call is not None:
            with contextlib.suppress(OSError):
                self._child.sendline("exit")
                deadline = time.monotonic() + processes.GRACE_S
                while not processes.exited(self._call) and time.monotonic() < deadline:
                    time.sleep(processes.POLL_S)
        self._end()

    def _end(self) -> str:
        """End the console and what it left; how it ended (``exited 0``)."""
        call, child, self._call, self._child = self._call, self._child, None, None
        if call is None or child is None:
            return "ended"
        processes.finish(call)
        child.close()
        code = call.process.returncode
        return f"exited {code}" if code is None or code >= 0 else f"was killed by signal {-code}"

    def _read_to_prompt(self, command: str | None, *, confirm: bool) -> str:
        """Send ``command`` (None: none, the banner is read) and read up to the next prompt."""
        assert self._child is not None
        child = self._child
        argv = [*self.program, command or "(console)"]
        answer = _Answer(run.MAX_OUTPUT_BYTES)
        data, self._pending = self._pending, ""
        deadline = time.monotonic() + self.timeout_s
        try:
            if command is not None:
                child.sendline(command)
            while True:
                found = answer.add(data)
                if found is not None and found.prompt:
                    self._pending = found.after
                    return found.before.replace("\r\n", "\n").replace("\r", "\n")
                if found is not None:  # a (y/n) question
                    reply = "y" if confirm else "n"
                    child.sendline(reply)
                    data = reply + "\n"
                    continue
                if deadline <= time.monotonic():
                    raise pexpect.TIMEOUT("deadline passed")
                data = child.read_nonblocking(READ_CHUNK, timeout=deadline - time.monotonic())
        except _TooLarge:
            self._end()
            raise CliOutputTooLarge(argv, run.MAX_OUTPUT_BYTES) from None
        except pexpect.TIMEOUT:
            self._end()
            raise CliTimeout(argv, self.timeout_s) from None
        except (pexpect.EOF, OSError):
            tail = answer.last_line()
            when = f"during {command!r}" if command else "before its prompt"
            raise ConsoleDied(f"the CLI console {self._end()} {when}"
                              + (f" (last line: {tail!r})" if tail else "")) from None


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
