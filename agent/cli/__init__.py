"""The ``smartarray-agent`` command line: every command is a function in its own module of
this package, registered here, in one table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from typer.core import TyperCommand

from smartarray_agent.cli import agent, change, check, serve, simulate, status

app = typer.Typer(
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "[redfish]" is a config table, not markup
    help="Smart Array write cache and backup power: status, metrics and safe changes.",
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"smartarray-agent {version('smartarray-agent')}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Smart Array write cache and backup power: status, metrics and safe changes."""


# name: (the command, its click class)
COMMANDS: dict[str, tuple[Callable[..., None], type[TyperCommand]]] = {
    "status": (status.status, TyperCommand),
    "check": (check.check, check.PluginCommand),
    "set-cache-ratio": (change.set_cache_ratio, TyperCommand),
    "write-cache": (change.write_cache, TyperCommand),
    "run": (agent.run, TyperCommand),
    "metrics": (agent.metrics, TyperCommand),
    "serve": (serve.serve, TyperCommand),
}
GROUPS = {
    "config": agent.config_app,
    "simulate": simulate.app,
}
for _name, (_command, _class) in COMMANDS.items():
    app.command(_name, cls=_class)(_command)
for _name, _group in GROUPS.items():
    app.add_typer(_group, name=_name)


def main() -> None:
    app(prog_name="smartarray-agent")
