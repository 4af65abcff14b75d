"""``--ilo HOST[:PORT]`` of ``status`` and ``check``: the controllers from the iLO alone, no
vendor CLI (docs/redfish.md, "Without the vendor CLI"); no command that changes takes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import CommandContext, CommandError

if TYPE_CHECKING:
    from smartarray_agent.common.model import Snapshot

EXCLUDES = "--ilo excludes --input, --simulate and --cli: it reads no vendor CLI output"


def read_from_ilo(context: CommandContext, address: str) -> Snapshot:
    """The iLO at ``address`` read with ``[redfish]``'s settings; CommandError when there are
    none, the address is not ``host[:port]`` or the iLO cannot be read."""
    import asyncio

    from pydantic import ValidationError

    from smartarray_agent.collectors.redfish.crawl import read_ilo
    from smartarray_agent.collectors.redfish.errors import RedfishError

    settings = context.config.redfish
    if settings is None:
        raise CommandError(
            f"--ilo {address}: the configuration file has no [redfish] table: its "
            "credentials_file (and ca_file or verify_tls) say how to log in to the iLO "
            "(docs/redfish.md)", exitcodes.BAD_INPUT)
    try:
        ilo = settings.at(address)
    except ValidationError as error:
        why = "; ".join(problem["msg"].removeprefix("Value error, ")
                        for problem in error.errors())
        raise CommandError(f"--ilo {address}: {why}", exitcodes.BAD_INPUT) from None
    try:
        return asyncio.run(read_ilo(ilo))
    except RedfishError as error:
        raise CommandError(f"the iLO could not be read: {error}",
                           exitcodes.VENDOR_ERROR) from None
