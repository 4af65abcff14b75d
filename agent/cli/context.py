"""What a command is given once: the configuration with its command-line options laid over
it, and the ways to reach the vendor CLI, the iLO and saved captures from there. Messages go
to standard error as ``smartarray-agent: ...`` lines."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from smartarray_agent.charge import Charge
from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.inputs import InputError, read_capture
from smartarray_agent.cli.options import (
    CliPathOption,
    ConfigOption,
    LockFileOption,
    SimulateOption,
    TimeoutOption,
)
from smartarray_agent.collectors.base import CollectionError
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.errors import ParseError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.config import Config, Overrides, load_or_default
from smartarray_agent.configfile import ConfigError
from smartarray_agent.model import Snapshot
from smartarray_agent.vendor import CliUnavailable, open_runner

_UNAVAILABLE_CODE = {"not_found": exitcodes.CLI_NOT_FOUND, "bad_scenario": exitcodes.BAD_INPUT}


class CommandError(RuntimeError):
    """The command cannot go on; ``code`` is its exit code (cli/exitcodes.py)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def warn(message: str) -> None:
    """One warning line on standard error; the command goes on."""
    typer.echo(f"smartarray-agent: warning: {message}", err=True)


def fail(message: str, code: int) -> typer.Exit:
    """Print ``message`` as one error line and return the Exit to raise."""
    typer.echo(f"smartarray-agent: {message}", err=True)
    return typer.Exit(code)


@dataclass(frozen=True)
class CommandContext:
    config: Config
    config_path: Path | None = None  # as given with --config
    overrides: Overrides = field(default_factory=Overrides)  # the options laid over it

    @classmethod
    def load(cls, config_path: Path | None, overrides: Overrides) -> CommandContext:
        """The configuration file (or the defaults) with ``overrides`` laid over it; exits 2
        listing the problems of an invalid file."""
        try:
            config = overrides.apply(load_or_default(config_path))
        except ConfigError as error:
            raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
        return cls(config, config_path, overrides)

    def runner(self) -> VendorRunner:
        """One-shot runs of the configured CLI under the host lock; raises CommandError
        when there is no CLI to run."""
        try:
            return open_runner(self.config.ssacli, console=False)
        except CliUnavailable as error:
            raise CommandError(str(error), _UNAVAILABLE_CODE[error.reason]) from None

    def read_charge(self) -> Charge:
        """The iLO's battery charge, read now, before the CLI lock is taken (the iLO is
        slow); a failure is a warning and the command goes on without it."""
        charge = Charge(self.config.redfish)
        if charge.configured and charge.read() is None:
            warn(f"no battery charge from the iLO: {charge.error}")
        return charge

    def read_snapshot(self, input_file: str | None = None) -> Snapshot:
        """Every controller: from saved CLI output when ``input_file`` is given (``-``:
        standard input), else one read of the CLI. Raises CommandError."""
        if input_file is not None:
            try:
                return parse(read_capture(input_file))
            except (InputError, ParseError) as error:
                raise CommandError(str(error), exitcodes.BAD_INPUT) from None
        runner = self.runner()
        try:
            return read_snapshot(runner)
        except CollectionError as error:
            raise CommandError(str(error), exitcodes.VENDOR_ERROR) from None
        finally:
            runner.close()


# The options of every command that talks to the vendor CLI, as parameters.
_SHARED = (
    ("config", ConfigOption),
    ("simulate", SimulateOption),
    ("cli", CliPathOption),
    ("timeout", TimeoutOption),
    ("lock_file", LockFileOption),
)


def with_context(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` (which takes ``context: CommandContext``) the options every command
    that talks to the vendor CLI shares (``--config``, ``--simulate``, ``--cli``,
    ``--timeout``, ``--lock-file``), and build its context from them once."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "context"]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                annotation=annotation) for name, annotation in _SHARED]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        given = {name: kwargs.pop(name) for name, _ in _SHARED}
        overrides = Overrides(
            simulate=given["simulate"],
            cli_path=Path(given["cli"]) if given["cli"] else None,
            timeout_s=given["timeout"],
            lock_file=given["lock_file"],
        )
        command(context=CommandContext.load(given["config"], overrides), **kwargs)

    parameters = own + shared
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper
