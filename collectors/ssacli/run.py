"""Run one vendor CLI command: argv only (never a shell), stdin from /dev/null, ``LC_ALL=C``,
``INFOMGR_BYPASS_NONSA=1``, and a timeout that ends the whole process group."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.processes import end_groups


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


@dataclass(frozen=True)
class CliResult:
    argv: tuple[str, ...]
    returncode: int
    output: str


def vendor_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANG": "C", "INFOMGR_BYPASS_NONSA": "1"})
    return env


def run_once(cli: VendorCli, command: list[str], timeout_s: float = 60.0) -> CliResult:
    argv = [*cli.argv, *command]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=vendor_env(),
        start_new_session=True,  # its own process group, so a timeout ends all of it
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        end_groups([process.pid])
        process.communicate()  # reap it and close its pipe
        raise CliTimeout(argv, timeout_s) from None
    return CliResult(
        argv=tuple(argv),
        returncode=process.returncode,
        output=output.decode("utf-8", errors="replace"),
    )
