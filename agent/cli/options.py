"""The option types the commands share, so each reads and helps the same everywhere. Every
command that talks to the vendor CLI takes ``--config``, ``--simulate``, ``--cli``,
``--timeout`` and ``--lock-file``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from smartarray_agent.config import DEFAULT_PATH

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", metavar="FILE",
        help=f"Configuration file (default: {DEFAULT_PATH}, when it exists).",
    ),
]
SimulateOption = Annotated[
    str | None,
    typer.Option(
        "--simulate", metavar="SCENARIO",
        help="Run the bundled simulator (a scenario name or file) instead of the vendor CLI.",
    ),
]
CliPathOption = Annotated[
    str | None,
    typer.Option("--cli", metavar="PATH", help="The vendor CLI to run (default: discovered)."),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("-t", "--timeout", min=1.0, metavar="SECONDS",
                 help="Seconds before the vendor CLI is killed (default: [ssacli] timeout_s, "
                      "120)."),
]
LockFileOption = Annotated[
    Path | None,
    typer.Option("--lock-file", metavar="FILE",
                 help="The host-wide vendor CLI lock (default: [ssacli] lock_file)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
InputOption = Annotated[
    str | None,
    typer.Option(
        "--input", "-i", metavar="FILE",
        help="Read saved CLI output ('-' for standard input) instead of running the CLI.",
    ),
]
