"""``smartarray-agent check``: a Nagios/Icinga plugin, by the monitoring plugins' guidelines.

Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error, an unreadable input, a
CLI that cannot run or times out); one status line on standard output,
``SMARTARRAY STATE - reason | perfdata``; ``-w``/``--warning`` and ``-c``/``--critical`` for
the charge thresholds, ``-t``/``--timeout``, ``-h``/``--help`` and ``-V``/``--version`` as
plugins use them.
"""

from __future__ import annotations

from typing import Any, NoReturn

import click
from click.exceptions import Exit

from smartarray_agent.cli import plugin
from smartarray_agent.cli.context import CommandContext, CommandError, with_context
from smartarray_agent.cli.options import input_option


class PluginCommand(click.Command):
    """A usage error (an unknown option, a bad value) is UNKNOWN, exit 3, on stdout."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as error:
            _unknown(f"usage: {error.format_message()} (see 'smartarray-agent check -h')")


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from importlib.metadata import version

        click.echo(f"smartarray-agent check {version('smartarray-agent')}")
        raise Exit(plugin.OK)


_PERCENT = click.FloatRange(min=0, max=100)


@click.command("check", cls=PluginCommand)
@with_context
@click.option("-w", "--warning", "--charge-warning", type=_PERCENT, metavar="PCT",
              help="WARNING below this backup power charge (%), where known (default: "
                   "[check] charge_warning_percent, 90).")
@click.option("-c", "--critical", "--charge-critical", type=_PERCENT, metavar="PCT",
              help="CRITICAL below this charge (%); also what counts as protected write "
                   "cache (default: the interlock's threshold, 80).")
@input_option
@click.option("-V", "--version", is_flag=True, callback=_print_version, expose_value=False,
              is_eager=True, help="Print the version.")
def check(
    context: CommandContext,
    warning: float | None,
    critical: float | None,
    input_file: str | None,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage errors and
    timeouts too), one status line with the reason and perfdata."""
    settings = context.config
    thresholds = plugin.Thresholds(
        warning if warning is not None else settings.check.charge_warning_percent,
        critical if critical is not None
        else settings.check.charge_critical_percent
        if settings.check.charge_critical_percent is not None
        else settings.policy.battery_threshold_percent,
    )
    try:
        snapshot = context.read_snapshot(input_file)
    except CommandError as error:
        _unknown(str(error))
    if snapshot.error is not None:
        _unknown(f"the saved output is a vendor error: {snapshot.error.message}")
    result = plugin.judge(snapshot, thresholds)
    click.echo(result.line(plugin.summary(snapshot)))
    raise Exit(result.code)


def _unknown(message: str) -> NoReturn:
    click.echo(f"SMARTARRAY UNKNOWN - {message}")
    raise Exit(plugin.UNKNOWN)
