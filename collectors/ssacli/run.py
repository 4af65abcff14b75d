"""Run one vendor CLI command: argv only (never a shell), stdin from /dev/null, ``LC_ALL=C``,
``INFOMGR_BYPASS_NONSA=1``, a timeout that ends the whole process group (and any process
that left it holding the CLI's output: the run never waits for an end of file after the CLI
exited or was ended), and a cap on what it may print (``MAX_OUTPUT_BYTES``): a CLI that
prints more is ended and the round fails, instead of the agent holding it all in memory."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.collectors.ssacli.processes import GRACE_S, end_groups, holders
from smartarray_agent.common.confine import confine_root


class CliTimeout(SsacliError):
    def __init__(self, argv: list[str], timeout_s: float) -> None:
        self.argv = argv
        super().__init__(f"{' '.join(argv)} did not finish in {timeout_s:g} s and was killed")


class CliFailed(SsacliError):
    """The CLI exited non-zero without an ``Error:`` line: it crashed, its output is not
    to be trusted."""

    def __init__(self, argv: list[str] | tuple[str, ...], returncode: int, output: str) -> None:
        self.returncode = returncode
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited {returncode}"
        super().__init__(
            f"{' '.join(argv)} {how}" + (f" after printing {last[:80]!r}" if last else "")
        )


# 16 MiB: ~100 times the largest output seen (the 8-controller, 192-drive `large` scenario
# prints ~160 kB for `ctrl all show config detail`). docs/agent.md, "Limits".
MAX_OUTPUT_BYTES = 16 * 2**20
READ_CHUNK = 1 << 16


class CliOutputTooLarge(CliFailed):
    """The CLI printed more than ``MAX_OUTPUT_BYTES``: ended, its output not kept."""

    def __init__(self, argv: list[str], limit: int) -> None:
        RuntimeError.__init__(self, f"{' '.join(argv)} printed more than {limit // 2**20} MiB "
                                    "and was ended (MAX_OUTPUT_BYTES)")
        self.returncode = -1


@dataclass(frozen=True)
class CliResult:
    argv: tuple[str, ...]
    returncode: int
    output: str


def vendor_env() -> dict[str, str]:
    return {**os.environ, "LC_ALL": "C", "LANG": "C", "INFOMGR_BYPASS_NONSA": "1"}


def run_once(cli: VendorCli, command: list[str], timeout_s: float = 60.0,
             started: Callable[[int], None] | None = None) -> CliResult:
    """Run ``command``; ``started`` is told the CLI's pid as soon as it runs (the host lock
    records it, so that a CLI left behind by a killed caller can be found). The run ends
    when the CLI exits, or at the timeout, whatever its children do (:func:`_let_go`)."""
    argv = [*cli.argv, *command]
    confine_root()  # the CLI inherits the filter
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=vendor_env(),
            start_new_session=True,  # its own process group, so a timeout ends all of it
        )
    except OSError as error:
        raise SsacliError(f"could not run {argv[0]}: {error}") from None
    exited = False
    try:
        if started is not None:
            started(process.pid)
        output = _read_capped(process, timeout_s, MAX_OUTPUT_BYTES)
        exited = True
    except subprocess.TimeoutExpired:
        raise CliTimeout(argv, timeout_s) from None
    except CliOutputTooLarge:
        raise CliOutputTooLarge(argv, MAX_OUTPUT_BYTES) from None
    finally:  # also on Ctrl-C, or a stop signal's SystemExit: the CLI must not outlive us
        _let_go(process, exited)
    return CliResult(
        argv=tuple(argv),
        returncode=process.returncode,
        output=output.decode("utf-8", errors="replace"),
    )


def _read_capped(process: subprocess.Popen[bytes], timeout_s: float, limit: int) -> bytes:
    """All the CLI prints until it exits (what a process it left behind prints later is not
    its answer, and the end of file never comes while such a process holds the output open);
    TimeoutExpired past ``timeout_s``, CliOutputTooLarge past ``limit`` bytes. The CLI is
    left for :func:`_let_go` to reap."""
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
                        process.wait(max(0.0, deadline - time.monotonic()))
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


def _let_go(process: subprocess.Popen[bytes], exited: bool) -> None:
    """End what is left of a run, never waiting for an end of file: the CLI's process group
    unless the CLI exited, then whatever else still holds its output open (a grandchild that
    moved to a session of its own would hold it for ever, and the host lock with it); then
    close the output and reap the CLI."""
    assert process.stdout is not None
    if not exited:
        end_groups([process.pid])
    end_groups(holders(process.stdout.fileno()))
    process.stdout.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(GRACE_S)  # a CLI stuck in the kernel past KILL is left to subprocess

