"""The ``smartarray-agent`` command line: every command is a click command in its own module
of this package, registered here, in one table. Only the module of the command being run is
imported (``--help`` and shell completion read the table), so a command pays at start for
nothing but itself (docs/benchmarks.md)."""

from __future__ import annotations

import gc
import importlib
from typing import TYPE_CHECKING, NamedTuple

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

PROG = "smartarray-agent"
HELP = "Smart Array write cache and backup power: status, metrics and safe changes."


class Entry(NamedTuple):
    target: str  # "module:attribute", the click command or group
    help: str  # its line in --help and in shell completion


COMMANDS: dict[str, Entry] = {
    "status": Entry("smartarray_agent.cli.status:status",
                    "Show each controller's cache, write-cache switches and backup power."),
    "check": Entry("smartarray_agent.cli.check:check",
                   "Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."),
    "set-cache-ratio": Entry("smartarray_agent.cli.change:set_cache_ratio",
                             "Set a controller's read/write cache ratio."),
    "write-cache": Entry("smartarray_agent.cli.change:write_cache",
                         "Turn no-battery, drive or logical drive write cache on or off."),
    "run": Entry("smartarray_agent.cli.agent:run",
                 "Collect in the background and serve Prometheus metrics."),
    "metrics": Entry("smartarray_agent.cli.agent:metrics",
                     "Collect once and print or write the metrics."),
    "serve": Entry("smartarray_agent.cli.serve:serve",
                   "Serve the metrics that 'run' publishes, without privileges."),
    "config": Entry("smartarray_agent.cli.agent:config_group",
                    "Check the agent's configuration file."),
    "simulate": Entry("smartarray_agent.cli.simulate:simulate",
                      "The bundled Smart Array CLI simulator."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported from :data:`COMMANDS` when one is run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, _, attribute = entry.target.partition(":")
        try:
            command = getattr(importlib.import_module(module), attribute)
        finally:
            gc.enable()  # main() turned it off for the imports; the command runs with it
        assert isinstance(command, click.Command), entry.target
        command.short_help = entry.help
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.help) for name, entry in COMMANDS.items()])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        names = [CompletionItem(name, help=entry.help) for name, entry in COMMANDS.items()
                 if name.startswith(incomplete)]
        return names + click.Command.shell_complete(self, ctx, incomplete)


def _show_completion(ctx: click.Context, param: click.Parameter, shell: str | None) -> None:
    if shell is None or ctx.resilient_parsing:
        return
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    assert complete is not None  # the option's choices are the shells click knows
    variable = f"_{PROG.replace('-', '_').upper()}_COMPLETE"
    click.echo(complete(app, {}, PROG, variable).source())
    ctx.exit()


@click.group(PROG, cls=LazyGroup, help=HELP, no_args_is_help=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=PROG, prog_name=PROG, message="%(prog)s %(version)s",
                      help="Print the version.")
@click.option("--show-completion", type=click.Choice(["bash", "zsh", "fish"]),
              metavar="SHELL", callback=_show_completion, expose_value=False, is_eager=True,
              help="Print the completion script for SHELL (bash, zsh or fish).")
def app() -> None:
    pass


def loaded_group() -> click.Group:
    """The command tree with every command imported, for what reads it whole (the manual
    page, the tests); running a command goes through :data:`app`."""
    context = click.Context(app, info_name=PROG)
    commands = {name: app.get_command(context, name) for name in COMMANDS}
    return click.Group(PROG, commands={n: c for n, c in commands.items() if c is not None},
                       params=app.params, help=HELP)


def main() -> None:
    # Importing click and the command's modules makes many objects and no garbage: the
    # cyclic collector's passes over them are CPU for nothing. It is off until the
    # command's module is imported. When the command ends, what the process holds is
    # frozen: Python's last collection at exit would otherwise walk all of it just before
    # the process ends (about an eighth of a status command's CPU here, docs/benchmarks.md).
    gc.disable()
    try:
        app(prog_name=PROG)
    finally:
        gc.freeze()
