"""Run one vendor CLI command, one-shot: stdin from /dev/null, a timeout, and a cap on what it
may print (``MAX_OUTPUT_BYTES``): a CLI that prints more is ended and the round fails, instead
of the agent holding it all in memory. The run ends when the CLI exits, whatever a process
it left does with its output, or at the timeout; then :func:`.processes.finish` ends what is
left of it."""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli import processes
from smartarray_agent.collectors.ssacli.errors import CliOutputTooLarge, CliTimeout

# 16 MiB: ~100 times the largest output seen (the 8-controller, 192-drive `large` scenario
# prints ~160 kB for `ctrl all show config detail`). docs/agent.md, "Limits".
MAX_OUTPUT_BYTES = 16 * 2**20
READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class CliResult:
    argv: tuple[str, ...]
    returncode: int
    output: str


def run_once(program: Sequence[str], command: list[str], timeout_s: float = 60.0,
             started: Callable[[int], None] | None = None) -> CliResult:
    """Run ``command`` with the CLI's ``program`` (its argv prefix); ``started`` is told the
    CLI's pid as soon as it runs (the host lock records it, so that a CLI left behind by a
    killed caller can be found)."""
    argv = [*program, *command]
    output, answer = os.pipe()
    with open(output, "rb", buffering=0):  # closes the read end
        try:
            call = processes.start(argv, [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                          (os.POSIX_SPAWN_DUP2, answer, 1),
                                          (os.POSIX_SPAWN_DUP2, answer, 2)])
        finally:
            os.close(answer)
        try:
            if started is not None:
                started(call.pid)
            received = _read_capped(call, output, argv, timeout_s)
        finally:  # also on Ctrl-C, or a stop signal's SystemExit: the CLI must not outlive us
            processes.finish(call)
    assert call.returncode is not None  # it exited, and finish reaped it
    return CliResult(tuple(argv), call.returncode, received.decode("utf-8", "replace"))


def _read_capped(call: processes.Call, output: int, argv: list[str], timeout_s: float) -> bytes:
    """All the CLI prints until it exits (what a process it left behind prints later is not
    its answer, and the end of file never comes while such a process holds the output open);
    CliTimeout past ``timeout_s``, CliOutputTooLarge past ``MAX_OUTPUT_BYTES``. Its exit is
    looked at each time it prints, or every ``POLL_S``."""
    os.set_blocking(output, False)
    deadline = time.monotonic() + timeout_s
    received = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(output, selectors.EVENT_READ)
        while True:
            ended = processes.exited(call)  # then all it wrote is in the pipe
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(output, READ_CHUNK):
                    received += chunk
                    if len(received) > MAX_OUTPUT_BYTES:
                        raise CliOutputTooLarge(argv, MAX_OUTPUT_BYTES)
                if selector.get_map():  # the end of file: only its exit is left to see
                    selector.unregister(output)
            if ended:
                return bytes(received)
            if time.monotonic() >= deadline:
                raise CliTimeout(argv, timeout_s)
            selector.select(processes.POLL_S)
