"""``smartarray-agent status``: each controller as a table, or the status JSON contract."""

import json

import typer

from smartarray_agent.cli import exitcodes, table
from smartarray_agent.cli.context import CommandContext, CommandError, fail
from smartarray_agent.cli.ilo import EXCLUDES, read_from_ilo
from smartarray_agent.cli.options import (
    CliPath,
    ConfigFile,
    Ilo,
    InputFile,
    Json,
    LockFile,
    Simulate,
    Timeout,
)
from smartarray_agent.collectors.ssacli.errors import NO_CONTROLLERS_HINT
from smartarray_agent.common.model import to_json


def status(as_json: Json = False, input_file: InputFile = None, config: ConfigFile = None,
           simulate: Simulate = None, cli: CliPath = None, timeout: Timeout = None,
           lock_file: LockFile = None, ilo: Ilo = None) -> None:
    """Show each controller's cache, write-cache switches and backup power (with the iLO's
    battery charge when [redfish] is configured, but not for --input, which may be another
    host's output). With --ilo, from that iLO alone, without the vendor CLI."""
    context = CommandContext(config, simulate, cli, timeout, lock_file)
    if input_file is not None and simulate is not None:
        raise typer.BadParameter("--input and --simulate exclude each other")
    if ilo is not None and (input_file, simulate, cli) != (None, None, None):
        raise typer.BadParameter(EXCLUDES)
    try:
        snapshot = (read_from_ilo(context, ilo) if ilo is not None
                    else context.read_snapshot(input_file))
    except CommandError as error:
        if as_json:  # a consumer of the JSON reads why from the JSON too
            print(json.dumps({"error": {"message": str(error), "exit_code": error.code}},
                             indent=2))
        raise fail(str(error), error.code) from None
    if as_json:
        print(to_json(snapshot))
    else:
        print(table.render(snapshot), end="")
    if snapshot.error is not None:
        message = f"the saved output is a vendor error: Error: {snapshot.error.message}"
        if snapshot.error.kind == "no_controllers":
            message += f"\nhint: {NO_CONTROLLERS_HINT}"
        raise fail(message, exitcodes.VENDOR_ERROR)
