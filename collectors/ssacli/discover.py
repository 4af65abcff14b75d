"""Find the vendor CLI: ``ssacli``, then ``hpssacli``, then ``hpacucli``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.collectors.ssacli.run import CliResult, run_once
from smartarray_agent.collectors.ssacli.session import ConsoleSession

NAMES = ("ssacli", "hpssacli", "hpacucli")
# Where the vendor packages install them, besides PATH.
VENDOR_DIRS = (
    "/usr/sbin",
    "/sbin",
    "/opt/smartstorageadmin/ssacli/bin",
    "/opt/hp/hpssacli/bld",
    "/opt/compaq/hpacucli/bld",
    "/opt/hp/hpacucli/bld",
)
INSTALL_HINT = (
    "install HPE's 'ssacli' package (Smart Storage Administrator CLI, from HPE's Software "
    "Delivery Repository 'mcp' for your distribution)"
)


class CliNotFound(SsacliError):
    """No vendor CLI to run: the message says where it looked, or what is wrong with the one
    that was named; ``summary`` says it in one short clause (for a service's status line)."""

    def __init__(self, message: str, summary: str | None = None) -> None:
        super().__init__(message)
        self.summary = summary or message


@dataclass(frozen=True)
class VendorCli:
    """The vendor CLI's program, run as processes: one-shot runs and consoles."""

    argv: tuple[str, ...]  # the program, or a simulator's command prefix
    name: str  # "ssacli", "hpssacli", "hpacucli" or "simulator"

    def run(self, command: list[str], *, timeout_s: float,
            started: Callable[[int], None] | None = None) -> CliResult:
        return run_once(self.argv, command, timeout_s, started)

    def console(self, *, timeout_s: float) -> ConsoleSession:
        """A console, started: its banner read."""
        session = ConsoleSession(self.argv, timeout_s=timeout_s)
        session.start()
        return session


def find_cli(override: str | None = None, path: str | None = None) -> VendorCli:
    """The first installed CLI by preference, or ``override`` when given (which must exist)."""
    if override:
        program = Path(override)
        if program.is_file() and os.access(program, os.X_OK):
            return VendorCli((str(program),), _name_of(program.name))
        what = "does not exist" if not program.exists() else "is not an executable file"
        raise CliNotFound(f"the vendor CLI {program} {what} (--cli or [ssacli] path)")
    looked_for = []
    for name in NAMES:
        found = shutil.which(name, path=path)
        if found:
            return VendorCli((found,), name)
        looked_for.append(f"{name} on PATH")
        for directory in VENDOR_DIRS:
            candidate = Path(directory) / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return VendorCli((str(candidate),), name)
    looked_for.append("in " + ", ".join(VENDOR_DIRS))
    raise CliNotFound(f"no Smart Array CLI found: looked for {', '.join(looked_for)}; "
                      f"{INSTALL_HINT}",
                      f"no Smart Array CLI found ({', '.join(NAMES)}, on PATH or in the vendor "
                      f"directories); {INSTALL_HINT}")


def _name_of(filename: str) -> str:
    return next((name for name in NAMES if filename.startswith(name)), filename)
