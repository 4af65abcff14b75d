"""Run one vendor CLI command: argv only (never a shell), stdin from /dev/null, ``LC_ALL=C``,
``INFOMGR_BYPASS_NONSA=1``, a timeout that ends the whole process group, and a cap on what
it may print (``MAX_OUTPUT_BYTES``): a CLI that prints more is ended and the round fails,
instead of the agent holding it all in memory."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.processes import end_groups
from smartarray_agent.common.confine import confine_root


class CliTimeout(RuntimeError):
    def __init__(self, argv: list[str], timeout_s: float) -> None:
        self.argv = argv
        super().__init__(f"{' '.join(argv)} did not finish in {timeout_s:g} s and was killed")


class CliFailed(RuntimeError):
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
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANG": "C", "INFOMGR_BYPASS_NONSA": "1"})
    return env


def run_once(cli: VendorCli, command: list[str], timeout_s: float = 60.0,
             started: Callable[[int], None] | None = None) -> CliResult:
    """Run ``command``; ``started`` is told the CLI's pid as soon as it runs (the host lock
    records it, so that a CLI left behind by a killed caller can be found)."""
    argv = [*cli.argv, *command]
    confine_root()  # the CLI inherits the filter
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=vendor_env(),
        start_new_session=True,  # its own process group, so a timeout ends all of it
    )
    try:
        if started is not None:
            started(process.pid)
        output = _read_capped(process, timeout_s, MAX_OUTPUT_BYTES)
    except subprocess.TimeoutExpired:
        end_groups([process.pid])
        process.communicate()  # reap it and close its pipe
        raise CliTimeout(argv, timeout_s) from None
    except CliOutputTooLarge:
        end_groups([process.pid])
        process.communicate()
        raise CliOutputTooLarge(argv, MAX_OUTPUT_BYTES) from None
    except BaseException:  # Ctrl-C, or a stop signal's SystemExit: the CLI must not outlive us
        end_groups([process.pid])
        process.communicate()
        raise
    return CliResult(
        argv=tuple(argv),
        returncode=process.returncode,
        output=output.decode("utf-8", errors="replace"),
    )


def _read_capped(process: subprocess.Popen[bytes], timeout_s: float, limit: int) -> bytes:
    """All the process prints until it exits; TimeoutExpired past ``timeout_s``,
    CliOutputTooLarge past ``limit`` bytes."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(process.args, timeout_s)
            if not selector.select(left):
                continue
            chunk = os.read(process.stdout.fileno(), READ_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise CliOutputTooLarge([], limit)
            chunks.append(chunk)
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # closed its output but did not exit
        raise subprocess.TimeoutExpired(process.args, timeout_s) from None
    process.stdout.close()
    return b"".join(chunks)
