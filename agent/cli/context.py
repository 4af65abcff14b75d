"""What a command that talks to the vendor CLI is given once: the configuration with its
options laid over it, read when first needed, and the ways to the vendor CLI, the iLO and
saved captures; messages on standard error as ``smartarray-agent: ...`` lines. What is
behind each way is imported where it is first used: a command loads only what it runs (the
app imports every command module for its help)."""

from __future__ import annotations

import dataclasses
import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from smartarray_agent.cli import exitcodes

if TYPE_CHECKING:
    from smartarray_agent.collectors.charge import Charge
    from smartarray_agent.collectors.ssacli.runner import VendorRunner
    from smartarray_agent.common.model import Snapshot
    from smartarray_agent.config import Config, Overrides

_UNAVAILABLE_CODE = {"not_found": exitcodes.CLI_NOT_FOUND, "bad_scenario": exitcodes.BAD_INPUT}


class CommandError(RuntimeError):
    """The command cannot go on; ``code`` is its exit code (cli/exitcodes.py)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def warn(message: str) -> None:
    """One warning line on standard error; the command goes on."""
    print(f"smartarray-agent: warning: {message}", file=sys.stderr)


def fail(message: str, code: int) -> SystemExit:
    """Print ``message`` as one error line and return the SystemExit to raise."""
    print(f"smartarray-agent: {message}", file=sys.stderr)
    return SystemExit(code)


def web_overrides(listen: str | None, config_file: Path | None,
                  path: str | None) -> Overrides:
    """``run``'s and ``serve``'s ``[web]`` options, checked; exit 2 naming a bad one."""
    from smartarray_agent.config import Overrides, check_telemetry_path, parse_listen_address

    checks = (("--listen", listen, parse_listen_address),
              ("--web.telemetry-path", path, check_telemetry_path))
    for option, value, check in checks:
        try:
            if value is not None:
                check(value)
        except ValueError as error:
            raise fail(f"{option}: {error}", exitcodes.BAD_INPUT) from None
    return Overrides(listen_address=listen, web_config_file=config_file, telemetry_path=path)


@dataclass
class CommandContext:
    """The options every vendor-CLI command shares (cli/options.py), and the configuration
    they name, read when the command first needs it: ``status --input`` never does."""

    config_path: Path | None = None  # --config
    simulate: str | None = None  # --simulate, which --input excludes
    cli_path: Path | None = None  # --cli
    timeout_s: float | None = None  # --timeout
    lock_file: Path | None = None  # --lock-file
    # The runner last opened, for what reports on it while it runs (check's timeout).
    opened: VendorRunner | None = field(default=None, init=False, repr=False)

    def overrides(self, web: Overrides | None = None) -> Overrides:
        """The options that win over the configuration file, with ``run``'s ``web`` ones."""
        from smartarray_agent.config import Overrides

        return dataclasses.replace(web or Overrides(), simulate=self.simulate,
                                   cli_path=self.cli_path, timeout_s=self.timeout_s,
                                   lock_file=self.lock_file)

    @functools.cached_property
    def config(self) -> Config:
        """The configuration file (or the defaults) with the options laid over it; exits 2
        listing the problems of an invalid file."""
        from smartarray_agent.common.configfile import ConfigError
        from smartarray_agent.config import load_or_default

        try:
            return self.overrides().apply(load_or_default(self.config_path))
        except ConfigError as error:
            raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None

    def runner(self) -> VendorRunner:
        """The configured CLI under the host lock; raises CommandError when there is no CLI
        to run."""
        from smartarray_agent.vendor import CliUnavailable, open_runner

        try:
            self.opened = open_runner(self.config.ssacli)
        except CliUnavailable as error:
            raise CommandError(str(error), _UNAVAILABLE_CODE[error.reason]) from None
        return self.opened

    def read_charge(self) -> Charge:
        """The iLO's battery charge, read now, before the CLI lock is taken (the iLO is
        slow); a failure is a warning and the command goes on without it."""
        from smartarray_agent.collectors.charge import Charge

        charge = Charge(self.config.own_ilo)
        if charge.configured:
            charge.read()
            if charge.error is not None:
                warn(f"no battery charge from the iLO: {charge.error}")
        return charge

    def read_snapshot(self, input_file: str | None = None) -> Snapshot:
        """Every controller: from saved CLI output when ``input_file`` is given (``-``:
        standard input), as it is (it may be another host's); else one read of the CLI with
        the iLO's battery charge laid over it. Raises CommandError."""
        if input_file is not None:
            return _read_capture(input_file)
        from smartarray_agent.collectors.base import CollectionError
        from smartarray_agent.collectors.ssacli.collector import read_snapshot
        from smartarray_agent.collectors.ssacli.errors import SsacliError

        runner = self.runner()
        try:  # the read and the reconciliation in one job: the CLI starts once
            with runner.session():
                snapshot = read_snapshot(runner)
                self._reconcile(snapshot)
        except (CollectionError, SsacliError) as error:
            raise CommandError(str(error), exitcodes.VENDOR_ERROR) from None
        return self.read_charge().overlay(snapshot)  # the lock is free while the iLO answers

    def _reconcile(self, snapshot: Snapshot) -> None:
        """Close the audit log's unfinished changes with what ``snapshot``, read in this job,
        shows, and say so; warn about any left open."""
        from smartarray_agent.write.audit import AuditError, AuditLog
        from smartarray_agent.write.reconcile import reconcile

        try:
            done, still_open = reconcile(AuditLog(self.config.audit.path), lambda _: snapshot)
        except AuditError as error:
            warn(f"unfinished changes not checked: {error}")
            return
        for message in done:
            warn(message)
        for change in still_open:
            warn(f"unfinished change still open: {change.describe()}: a new change to that "
                 "controller is refused until it is reconciled")


def _read_capture(input_file: str) -> Snapshot:
    from smartarray_agent.cli.inputs import InputError, read_capture
    from smartarray_agent.collectors.ssacli.errors import ParseError
    from smartarray_agent.collectors.ssacli.parser import parse

    try:
        text = read_capture(input_file)
        snapshot = parse(text)
    except (InputError, ParseError) as error:
        raise CommandError(str(error), exitcodes.BAD_INPUT) from None
    if not text.endswith(("\n", "\r")):  # the CLI ends every line; a cut file does not
        name = "standard input" if input_file == "-" else input_file
        warn(f"{name} ends in the middle of a line: it may be truncated, and what it does "
             "not show is unknown")
    return snapshot
