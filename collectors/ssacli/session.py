"""The vendor CLI's console (started with no arguments: a banner, then a ``=> `` prompt), in
which a job pays the CLI's start-up once. Each answer runs to the next prompt; a ``(y/n)``
question is answered ``y`` only when the caller asked for it.

The console is spawned (:func:`.processes.start`: no fork of this process, which has threads)
as a session leader that opens a pseudo-terminal by name as its standard streams, which makes
it its controlling terminal, as over ssh; pexpect reads and writes the master (``fdspawn``).
One that ends before its first prompt raises ConsoleUnavailable, during a command
ConsoleDied; one past its timeout CliTimeout, past ``MAX_OUTPUT_BYTES`` CliOutputTooLarge,
each ended first with what it left behind (:func:`.processes.finish`).
"""

from __future__ import annotations

import contextlib
import os
import re
import termios
import time
from typing import Protocol

import pexpect
from pexpect.fdpexpect import fdspawn

from smartarray_agent.collectors.ssacli import processes, run
from smartarray_agent.collectors.ssacli.errors import (
    CliOutputTooLarge,
    CliTimeout,
    ConsoleDied,
    ConsoleUnavailable,
)

# The prompt, searched from a line start (an answer starts at one), or a (y/n) question;
# where both match at one place, the prompt
PROMPT_OR_QUESTION = re.compile(r"(?P<prompt>\n=> )|\(y/n\)\s*$")
TERMINAL = (24, 4000)  # rows, columns: wide, so the CLI never wraps a line for the terminal
READ_CHUNK = 65536
# The prompt ends the output, so only the tail of the answer is searched for it; searching
# all of a 150 kB answer after every read made a large collection several times slower.
SEARCH_WINDOW = 4096


class Console(Protocol):
    """A console, started (its banner read), answering one command at a time until closed;
    one that fails ends itself. :class:`ConsoleSession` is the CLI's."""

    banner: str

    @property
    def alive(self) -> bool: ...

    @property
    def pid(self) -> int | None: ...  # None: no process of its own

    def run(self, command: str, *, confirm: bool = False) -> str: ...

    def close(self) -> None: ...


class ConsoleSession:
    def __init__(self, program: tuple[str, ...], *, timeout_s: float) -> None:
        """Started, its banner read; ``timeout_s`` bounds that and each command."""
        self.program = program
        self.timeout_s = timeout_s
        self._pending = ""  # printed after a prompt, before the next command was sent
        master, terminal = os.openpty()
        try:
            attributes = termios.tcgetattr(terminal)
            attributes[3] &= ~termios.ECHO  # lflag: the CLI's input is not echoed back
            termios.tcsetattr(terminal, termios.TCSANOW, attributes)
            termios.tcsetwinsize(terminal, TERMINAL)
            self._call: processes.Call | None = processes.start(
                program, processes.terminal_streams(terminal))
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(terminal)  # the CLI opened its own: the master sees its end
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

    @property
    def alive(self) -> bool:
        return self._call is not None and not processes.exited(self._call)

    @property
    def pid(self) -> int | None:
        return self._call.pid if self._call is not None else None

    def run(self, command: str, *, confirm: bool = False) -> str:
        """The output of ``command``, CRLF made LF and the echo of the command dropped."""
        output = self._read_to_prompt(command, confirm=confirm)
        first, _, rest = output.lstrip("\n").partition("\n")
        return rest if first.strip() == command.strip() else output

    def close(self) -> None:
        """Ask the console to exit, then end it and what it left."""
        if self._call is not None:
            with contextlib.suppress(OSError):
                self._child.sendline("exit")
                deadline = time.monotonic() + processes.GRACE_S
                while not processes.exited(self._call) and time.monotonic() < deadline:
                    time.sleep(processes.POLL_S)
        self._end()

    def _end(self) -> str:
        """End the console and what it left; how it ended (``exited 0``)."""
        call, self._call = self._call, None
        if call is None:
            return "ended"
        processes.finish(call)
        self._child.close()
        code = call.returncode
        return f"exited {code}" if code is None or code >= 0 else f"was killed by signal {-code}"

    def _read_to_prompt(self, command: str | None, *, confirm: bool) -> str:
        """Send ``command`` (None: none, the banner is read) and read up to the next prompt."""
        argv = [*self.program, command or "(console)"]
        parts: list[str] = []  # the answer
        size = length = 0  # its bytes, as the CLI printed them, and its characters
        tail = "\n"  # its last SEARCH_WINDOW characters; a line starts where it begins
        data, self._pending = self._pending, ""
        deadline = time.monotonic() + self.timeout_s
        try:
            if command is not None:
                self._child.sendline(command)
            while True:
                size += len(data.encode(errors="replace"))
                if size > run.MAX_OUTPUT_BYTES:
                    parts.clear()
                    self._end()
                    raise CliOutputTooLarge(argv, run.MAX_OUTPUT_BYTES)
                region, offset = tail + data, length - len(tail)  # where region starts
                parts.append(data)
                length += len(data)
                tail = region[-SEARCH_WINDOW:]
                found = PROMPT_OR_QUESTION.search(region) if data else None
                if found is not None and found.lastgroup == "prompt":
                    whole = "".join(parts)
                    self._pending = whole[offset + found.end():]
                    return whole[:max(0, offset + found.start())].replace(
                        "\r\n", "\n").replace("\r", "\n")
                if found is not None:  # a (y/n) question
                    reply = "y" if confirm else "n"
                    self._child.sendline(reply)
                    data = reply + "\n"  # as a transcript shows it: the terminal does not echo
                    continue
                if deadline <= time.monotonic():
                    raise pexpect.TIMEOUT("deadline passed")
                data = self._child.read_nonblocking(READ_CHUNK, deadline - time.monotonic())
        except pexpect.TIMEOUT:
            self._end()
            raise CliTimeout(argv, self.timeout_s) from None
        except (pexpect.EOF, OSError):
            last = (tail.strip().splitlines() or [""])[-1]
            when = f"during {command!r}" if command else "before its prompt"
            raise ConsoleDied(f"the CLI console {self._end()} {when}"
                              + (f" (last line: {last!r})" if last else "")) from None
