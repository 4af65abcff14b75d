"""The options the commands share, so each reads and helps the same everywhere. Every
command that talks to the vendor CLI takes ``--config``, ``--simulate``, ``--cli``,
``--timeout`` and ``--lock-file``. Each is a click decorator: one Option per command.

Their files are given to the command as strings: ``status --input`` imports neither pathlib
nor the configuration (cli/context.py makes the paths when the configuration is read)."""

from __future__ import annotations

import click

from smartarray_agent.locations import CONFIG_FILE

FILE = click.Path()  # a str (see above)

config_option = click.option(
    "--config", type=FILE, metavar="FILE",
    help=f"Configuration file (default: {CONFIG_FILE}, when it exists).",
)
simulate_option = click.option(
    "--simulate", metavar="SCENARIO",
    help="Run the bundled simulator (a scenario name or file) instead of the vendor CLI.",
)
cli_path_option = click.option(
    "--cli", metavar="PATH", help="The vendor CLI to run (default: discovered).",
)
timeout_option = click.option(
    "-t", "--timeout", type=click.FloatRange(min=1.0), metavar="SECONDS",
    help="Seconds before the vendor CLI is killed (default: [ssacli] timeout_s, 120).",
)
lock_file_option = click.option(
    "--lock-file", type=FILE, metavar="FILE",
    help="The host-wide vendor CLI lock (default: [ssacli] lock_file).",
)
listen_option = click.option(
    "--listen", metavar="HOST:PORT",
    help="Listen address (overrides [web] listen_address; port 0: any).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
input_option = click.option(
    "--input", "-i", "input_file", metavar="FILE",
    help="Read saved CLI output ('-' for standard input) instead of running the CLI.",
)
