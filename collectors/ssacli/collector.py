"""The ssacli collector: one ``ctrl all show config detail`` per collection, whatever the
number of controllers, plus ``ctrl all show detail`` only when a controller's block came
back without its own fields (some firmware prints a short config section). The CLI's
version comes from the console banner, or from one ``version`` call in the collector's
life when it runs one-shot."""

from __future__ import annotations

from pathlib import Path

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import ParseError, VendorCommandError
from smartarray_agent.collectors.ssacli.lock import HostLock, LockError
from smartarray_agent.collectors.ssacli.parser import parse
from smartarray_agent.collectors.ssacli.run import CliFailed, CliTimeout
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.collectors.ssacli.session import SessionError
from smartarray_agent.model import Controller, Snapshot

CONFIG_DETAIL = ["ctrl", "all", "show", "config", "detail"]
DETAIL = ["ctrl", "all", "show", "detail"]
_FROM_DETAIL = ("serial", "firmware", "status", "mode", "cache", "backup_power", "temperatures")


class CollectionError(RuntimeError):
    """A collection failed; the message is one line that says why."""


class SsacliCollector:
    name = "ssacli"

    def __init__(
        self,
        cli: VendorCli,
        *,
        timeout_s: float,
        lock_path: Path,
        lock_wait_s: float,
        console: bool,
    ) -> None:
        self.runner = VendorRunner(
            cli, HostLock(lock_path, lock_wait_s), timeout_s=timeout_s, console=console
        )

    def collect(self) -> Snapshot:
        try:
            with self.runner.hold():
                snapshot = self._read(CONFIG_DETAIL)
                if any(not c.raw for c in snapshot.controllers):
                    _fill_from(snapshot, self._read(DETAIL))
                snapshot.cli_version = snapshot.cli_version or self.runner.version()
        except (VendorCommandError, CliTimeout, CliFailed, LockError, SessionError) as error:
            raise CollectionError(str(error)) from error
        except OSError as error:
            raise CollectionError(f"could not run {self.runner.cli.argv[0]}: {error}") from error
        return snapshot

    def close(self) -> None:
        self.runner.close()

    def _read(self, command: list[str]) -> Snapshot:
        output = self.runner.run(command)
        try:
            return parse(output)
        except ParseError as error:
            raise CollectionError(f"{' '.join(command)}: {error}") from error


def _fill_from(snapshot: Snapshot, detail: Snapshot) -> None:
    by_identity = {(c.model, c.slot): c for c in detail.controllers}
    for ctrl in snapshot.controllers:
        source = by_identity.get((ctrl.model, ctrl.slot))
        if ctrl.raw or source is None:
            continue
        _copy_fields(ctrl, source)


def _copy_fields(target: Controller, source: Controller) -> None:
    for field in _FROM_DETAIL:
        setattr(target, field, getattr(source, field))
    target.raw = source.raw
