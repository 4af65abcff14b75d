"""Find the vendor CLI: ``ssacli``, then ``hpssacli``, then ``hpacucli``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.collectors.ssacli.run import CliResult, run_once
from smartarray_agent.collectors.ssacli.session import Console, ConsoleSession

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
    """No vendor CLI to run; ``summary`` says it in a service's status line's length."""

    def __init__(self, message: str, summary: str | None = None) -> None:
        super().__init__(message)
        self.summary = summary or message


@dataclass
class VendorCli:
    """What runs the vendor commands: the CLI's program as processes, one-shot runs and
    consoles (agent/simulated.py's subclass answers in this process)."""

    argv: tuple[str, ...]  # the program, or a simulator's command prefix
    name: str  # "ssacli", "hpssacli", "hpacucli" or "simulator"

    def run(self, command: list[str], *, timeout_s: float,
            started: Callable[[int], None] | None = None) -> CliResult:
        return run_once(self.argv, command, timeout_s, started)

    def console(self, *, timeout_s: float) -> Console:
        return ConsoleSession(self.argv, timeout_s=timeout_s)


def find_cli(override: str | None = None, path: str | None = None) -> VendorCli:
    """``override`` when given (it must be there), else the first CLI by preference on
    ``path`` (default: PATH) or in the vendor directories."""
    if override:
        program = Path(override)
        if program.is_file() and os.access(program, os.X_OK):
            name = next((name for name in NAMES if program.name.startswith(name)), program.name)
            return VendorCli((str(program),), name)
        what = "does not exist" if not program.exists() else "is not an executable file"
        raise CliNotFound(f"the vendor CLI {program} {what} (--cli or [ssacli] path)")
    where = os.pathsep.join([os.environ.get("PATH", os.defpath) if path is None else path,
                             *VENDOR_DIRS])
    for name in NAMES:
        if found := shutil.which(name, path=where):
            return VendorCli((found,), name)
    looked_for = [*(f"{name} on PATH" for name in NAMES), "in " + ", ".join(VENDOR_DIRS)]
    raise CliNotFound(f"no Smart Array CLI found: looked for {', '.join(looked_for)}; "
                      f"{INSTALL_HINT}",
                      f"no Smart Array CLI found ({', '.join(NAMES)}, on PATH or in the vendor "
                      f"directories); {INSTALL_HINT}")
