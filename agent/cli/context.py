"""What a command is given once: the configuration with its command-line options laid over
it (read when the command first needs it), and the ways to reach the vendor CLI, the iLO
and saved captures from there. Messages go to standard error as ``smartarray-agent: ...``
lines.

The vendor CLI's runner, the iLO client and the parser are imported where a command first
needs them."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.options import add_config, add_vendor_cli

if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace
    from pathlib import Path

    from smartarray_agent.charge import Charge
    from smartarray_agent.collectors.ssacli.runner import VendorRunner
    from smartarray_agent.config import Config, Overrides
    from smartarray_agent.model import Snapshot

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


def add_context_options(parser: ArgumentParser) -> None:
    """The options of every command that talks to the vendor CLI, which
    :meth:`CommandContext.from_args` reads."""
    add_config(parser)
    add_vendor_cli(parser)


class CommandContext:
    """The options every vendor-CLI command shares, and the configuration they name, read
    when the command first needs it: ``status --input`` never does, so it neither reads
    the file nor imports the configuration's modules."""

    def __init__(self, *, config_path: str | None = None, simulate: str | None = None,
                 cli_path: str | None = None, timeout_s: float | None = None,
                 lock_file: str | None = None) -> None:
        self._config_path = config_path
        self.simulate = simulate  # --simulate, which --input excludes
        self._cli_path = cli_path
        self._timeout_s = timeout_s
        self._lock_file = lock_file

    @classmethod
    def from_args(cls, args: Namespace) -> CommandContext:
        """The context of the options :func:`add_context_options` added."""
        return cls(config_path=args.config, simulate=args.simulate, cli_path=args.cli,
                   timeout_s=args.timeout, lock_file=args.lock_file)

    @functools.cached_property
    def config_path(self) -> Path | None:
        """--config, when given."""
        from pathlib import Path

        return None if self._config_path is None else Path(self._config_path)

    @functools.cached_property
    def overrides(self) -> Overrides:
        """The options that win over the configuration file."""
        from pathlib import Path

        from smartarray_agent.config import Overrides

        return Overrides(simulate=self.simulate,
                         cli_path=Path(self._cli_path) if self._cli_path else None,
                         timeout_s=self._timeout_s,
                         lock_file=None if self._lock_file is None else Path(self._lock_file))

    @functools.cached_property
    def config(self) -> Config:
        """The configuration file (or the defaults) with the options laid over it; exits 2
        listing the problems of an invalid file."""
        from smartarray_agent.config import load_or_default
        from smartarray_agent.configfile import ConfigError

        try:
            return self.overrides.apply(load_or_default(self.config_path))
        except ConfigError as error:
            raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None

    def runner(self) -> VendorRunner:
        """One-shot runs of the configured CLI under the host lock; raises CommandError
        when there is no CLI to run."""
        from smartarray_agent.vendor import CliUnavailable, open_runner

        try:
            return open_runner(self.config.ssacli, console=False)
        except CliUnavailable as error:
            raise CommandError(str(error), _UNAVAILABLE_CODE[error.reason]) from None

    def read_charge(self) -> Charge:
        """The iLO's battery charge, read now, before the CLI lock is taken (the iLO is
        slow); a failure is a warning and the command goes on without it."""
        from smartarray_agent.charge import Charge

        charge = Charge(self.config.redfish)
        if charge.configured:
            charge.read()
            if charge.error is not None:
                warn(f"no battery charge from the iLO: {charge.error}")
        return charge

    def read_snapshot(self, input_file: str | None = None) -> Snapshot:
        """Every controller: from saved CLI output when ``input_file`` is given (``-``:
        standard input), as it is; else one read of the CLI, with the iLO's battery charge
        laid over it. A saved capture may be another host's, so this host's iLO is never
        asked for it. Raises CommandError."""
        if input_file is not None:
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
                warn(f"{name} ends in the middle of a line: it may be truncated, and what it "
                     "does not show is unknown")
            return snapshot
        from smartarray_agent.collectors.base import CollectionError
        from smartarray_agent.collectors.ssacli.collector import read_snapshot

        runner = self.runner()
        try:
            snapshot = read_snapshot(runner)
        except CollectionError as error:
            raise CommandError(str(error), exitcodes.VENDOR_ERROR) from None
        finally:
            runner.close()
        return self.read_charge().overlay(snapshot)  # the lock is free while the iLO answers
