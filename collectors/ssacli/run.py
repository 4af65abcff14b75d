"""Run one vendor CLI command, one-shot: stdin from /dev/null, a timeout, and a cap on what it
may print (``MAX_OUTPUT_BYTES``): a CLI that prints more is ended and the round fails, instead
of the agent holding it all in memory. The run ends when the CLI exits, whatever a process
it left does with its output, or at the timeout; then :func:`.processes.finish` ends what is
left of it."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
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
    call = processes.start(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    assert call.process.stdout is not None
    try:
        if started is not None:
            started(call.process.pid)
        output = _read_capped(call, timeout_s, MAX_OUTPUT_BYTES)
    except subprocess.TimeoutExpired:
        raise CliTimeout(argv, timeout_s) from None
    except CliOutputTooLarge:
        raise CliOutputTooLarge(argv, MAX_OUTPUT_BYTES) from None
    finally:  # also on Ctrl-C, or a stop signal's SystemExit: the CLI must not outlive us
        processes.finish(call)
        call.process.stdout.close()
    return CliResult(tuple(argv), call.process.returncode, output.decode("utf-8", "replace"))


def _read_capped(call: processes.Call, timeout_s: float, limit: int) -> bytes:
    """All the CLI prints until it exits (what a process it left behind prints later is not
    its answer, and the end of file never comes while such a process holds the output open);
    TimeoutExpired past ``timeout_s``, CliOutputTooLarge past ``limit`` bytes. Its exit is
    looked at each time it prints, or every ``POLL_S``."""
    assert call.process.stdout is not None
    output = call.process.stdout.fileno()
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
                    if len(received) > limit:
                        raise CliOutputTooLarge([], limit)
                if selector.get_map():  # the end of file: only its exit is left to see
                    selector.unregister(output)
            if ended:
                return bytes(received)
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(call.process.args, timeout_s)
            selector.select(processes.POLL_S)
