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
    TimeoutExpired past ``timeout_s``, CliOutputTooLarge past ``limit`` bytes."""
    process = call.process
    assert process.stdout is not None
    output = process.stdout.fileno()
    deadline = time.monotonic() + timeout_s
    received = bytearray()

    def keep(chunk: bytes) -> None:
        received.extend(chunk)
        if len(received) > limit:
            raise CliOutputTooLarge([], limit)

    exit_fd = _exit_fd(process.pid)
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(output, selectors.EVENT_READ)
            if exit_fd is not None:
                selector.register(exit_fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(process.args, timeout_s)
                for key, _events in selector.select(left):
                    if key.fd == exit_fd:  # all it wrote is in the pipe by now
                        os.set_blocking(output, False)
                        with contextlib.suppress(BlockingIOError):  # nothing more in it
                            while chunk := os.read(output, READ_CHUNK):
                                keep(chunk)
                        return bytes(received)
                    chunk = os.read(output, READ_CHUNK)
                    if chunk:
                        keep(chunk)
                    elif exit_fd is None:  # nothing tells its exit: the end of file does
                        while not processes.exited(call):  # not reaped: finish() does
                            if time.monotonic() > deadline:
                                raise subprocess.TimeoutExpired(process.args, timeout_s)
                            time.sleep(processes.POLL_S)
                        return bytes(received)
                    else:  # the end of file: its exit comes next
                        selector.unregister(output)
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits; None where the kernel has no
    pidfd (Linux before 5.3: RHEL 8) or a filter refuses it. Without one, a run ends at the
    CLI's end of file, or at its timeout when a process it left holds the output open."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None
