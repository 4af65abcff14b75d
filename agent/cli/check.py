"""``smartarray-agent check``: a Nagios/Icinga plugin, by the monitoring plugins' guidelines
(its help says how; docs/nagios.md more). The judgement is cli/plugin.py's."""

from typing import Annotated, Any, NoReturn

import typer
from typer import TyperException
from typer.core import TyperCommand

from smartarray_agent.cli import plugin
from smartarray_agent.cli.context import CommandContext, CommandError
from smartarray_agent.cli.deadline import TimeUp, deadline
from smartarray_agent.cli.ilo import EXCLUDES, read_from_ilo
from smartarray_agent.cli.options import (
    PROG,
    CliPath,
    ConfigFile,
    Ilo,
    InputFile,
    LockFile,
    Simulate,
    float_range,
    version_option,
)

# Under the 60 s after which Nagios (service_check_timeout), NRPE (command_timeout) and
# Icinga (a CheckCommand's timeout) kill a check by default, with room for a wait for the
# host lock ([ssacli] lock_wait_s, 30) and a run of the vendor CLI on a large box.
TIMEOUT_S = 50.0
PluginTimeout = Annotated[float, typer.Option(
    "-t", "--timeout", parser=float_range(1), metavar="SECONDS",
    help=f"Seconds the whole check may take (the wait for the host lock, the vendor CLI, the "
         f"parse); then UNKNOWN, and the vendor CLI is ended (default: {TIMEOUT_S:g}).")]


class PluginCommand(TyperCommand):  # a usage error is UNKNOWN, exit 3, on standard output

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except TyperException as error:  # what parsing raises: an unknown option, a bad value
            _unknown(f"usage: {error.format_message()} (see '{PROG} check -h')")


def _range(text: str) -> plugin.Range:
    try:
        return plugin.Range.parse(text)
    except plugin.RangeError as error:
        raise typer.BadParameter(str(error)) from None


def _threshold(*names: str, help: str) -> Any:
    return typer.Option(*names, parser=_range, metavar="RANGE", help=help)


def check(
    warning: Annotated[plugin.Range | None, _threshold(
        "-w", "--warning", "--charge-warning",
        help="WARNING when the known backup power charge (%) is outside this range; a bare N "
             "is N:, WARNING below N (default: [check] charge_warning_percent, 90).")] = None,
    critical: Annotated[plugin.Range | None, _threshold(
        "-c", "--critical", "--charge-critical",
        help="CRITICAL when the known charge (%) is outside this range; a bare N is N:, "
             "CRITICAL below N, and N is then also what counts as protected write cache "
             "(default: [check] charge_critical_percent, else the interlock's threshold, "
             "80).")] = None,
    input_file: InputFile = None,
    _version: Annotated[bool, version_option(f"{PROG} check", "-V", "--version")] = False,
    config: ConfigFile = None, simulate: Simulate = None, cli: CliPath = None,
    timeout: PluginTimeout = TIMEOUT_S, lock_file: LockFile = None, ilo: Ilo = None,
) -> None:
    """Nagios/Icinga plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage errors and
    timeouts too), one status line with the reason and perfdata.

    -w and -c are ranges of the monitoring plugins' guidelines: 10: (alert below 10), ~:90
    (above 90), 10:90 (outside 10 to 90), @10:20 (inside 10 to 20, both included). A bare
    number N is N: for this plugin, an alert below N, since a charge is good when high (the
    guidelines read a bare N as 0:N).

    -t bounds the whole check: the wait for the host lock, the vendor CLI and the parse.

    --ilo HOST[:PORT] judges what that iLO's Redfish service says, without the vendor CLI."""
    if ilo is not None and (input_file, simulate, cli) != (None, None, None):
        _unknown(f"usage: {EXCLUDES} (see '{PROG} check -h')")
    context = CommandContext(config, simulate, cli, None, lock_file)  # [ssacli] timeout_s
    try:
        with deadline(timeout, lambda: f"reading the iLO {ilo}" if ilo else _doing(context)):
            line, code = _check(context, input_file, warning, critical, ilo)
    except TimeUp as error:
        line, code = _unknown_line(str(error)), plugin.UNKNOWN
    print(line)
    raise SystemExit(code)


def _check(context: CommandContext, input_file: str | None, warning: plugin.Range | None,
           critical: plugin.Range | None, ilo: str | None = None) -> tuple[str, int]:
    settings = context.config
    interlock = (settings.check.charge_critical_percent
                 if settings.check.charge_critical_percent is not None
                 else settings.policy.battery_threshold_percent)
    thresholds = plugin.thresholds(
        warning if warning is not None else plugin.Range(settings.check.charge_warning_percent),
        critical if critical is not None else plugin.Range(interlock),
        interlock,
    )
    try:
        snapshot = (read_from_ilo(context, ilo) if ilo is not None
                    else context.read_snapshot(input_file))
    except CommandError as error:
        return _unknown_line(str(error)), plugin.UNKNOWN
    if snapshot.error is not None:
        return (_unknown_line(f"the saved output is a vendor error: {snapshot.error.message}"),
                plugin.UNKNOWN)
    result = plugin.judge(snapshot, thresholds)
    return result.line(plugin.summary(snapshot)), result.code


def _doing(context: CommandContext) -> str:
    runner = context.opened
    if runner is not None and runner.lock.waiting:
        return f"the wait for the host lock {runner.lock.path}, held by {runner.lock.who()},"
    if runner is not None and runner.running is not None:
        return f"{runner.cli.name} {runner.running}"
    return "the check"


def _unknown_line(message: str) -> str:
    return f"SMARTARRAY UNKNOWN - {message}"


def _unknown(message: str) -> NoReturn:
    print(_unknown_line(message))
    raise SystemExit(plugin.UNKNOWN)
