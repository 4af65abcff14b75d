"""The options the commands share, so each reads and helps the same everywhere: each is a
function that adds it to a command's parser. Every command that talks to the vendor CLI
takes ``--config``, ``--simulate``, ``--cli``, ``--timeout`` and ``--lock-file``
(cli/context.py adds them together).

Their files are given to the command as strings: ``status --input`` imports neither pathlib
nor the configuration (cli/context.py makes the paths when the configuration is read).
Shell completion offers file names for a value whose metavar is FILE or PATH, directory
names for DIR (cli/completion.py). A ``%`` in a help text is written ``%%`` (argparse
formats it)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from smartarray_agent.locations import CONFIG_FILE


def float_range(minimum: float, maximum: float | None = None) -> Callable[[str], float]:
    """A number from ``minimum`` to ``maximum`` (inclusive); argparse names the option in
    the message of one that is not."""
    bounds = f"x>={minimum:g}" if maximum is None else f"{minimum:g}<=x<={maximum:g}"

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value:g} is not in the range {bounds}")
        return value

    return number


PERCENT = float_range(0, 100)


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="FILE",
        help=f"Configuration file (default: {CONFIG_FILE}, when it exists).")


def add_vendor_cli(parser: argparse.ArgumentParser) -> None:
    """How to run the vendor CLI: ``--simulate``, ``--cli``, ``--timeout``, ``--lock-file``."""
    parser.add_argument(
        "--simulate", metavar="SCENARIO",
        help="Run the bundled simulator (a scenario name or file) instead of the vendor CLI.")
    parser.add_argument("--cli", metavar="PATH",
                        help="The vendor CLI to run (default: discovered).")
    parser.add_argument(
        "-t", "--timeout", type=float_range(1), metavar="SECONDS",
        help="Seconds before the vendor CLI is killed (default: [ssacli] timeout_s, 120).")
    parser.add_argument("--lock-file", metavar="FILE",
                        help="The host-wide vendor CLI lock (default: [ssacli] lock_file).")


def add_listen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--listen", metavar="HOST:PORT",
        help="Listen address (overrides [web] listen_address; port 0: any).")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", dest="as_json", action="store_true", help="Print JSON.")


def add_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-i", "--input", dest="input_file", metavar="FILE",
        help="Read saved CLI output ('-' for standard input) instead of running the CLI.")
