"""The bundled simulator as the vendor CLI for ``--simulate`` and ``[ssacli] simulate``,
answering in this process with the program's own bytes (simulator/inprocess.py); a scenario
whose faults only a process shows runs the program, as ``--cli`` does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import ConsoleDied, ConsoleUnavailable
from smartarray_agent.collectors.ssacli.run import CliResult
from smartarray_agent.collectors.ssacli.session import Console
from smartarray_agent.simulator import inprocess, vendor_argv


class SimulatedCli(VendorCli):
    """The simulator on ``scenario``'s host; its program where a process is needed."""

    def __init__(self, scenario: Path) -> None:
        super().__init__(tuple(vendor_argv(scenario)), "simulator")
        self.scenario = scenario

    def run(self, command: list[str], *, timeout_s: float,
            started: Callable[[int], None] | None = None) -> CliResult:
        try:
            code, output = inprocess.run(self.scenario, command)
        except inprocess.NeedsProcess:
            return super().run(command, timeout_s=timeout_s, started=started)
        return CliResult((*self.argv, *command), code, output.decode("utf-8", errors="replace"))

    def console(self, *, timeout_s: float) -> Console:
        try:
            return _InProcessConsole(inprocess.Console(self.scenario))
        except inprocess.NeedsProcess:
            return super().console(timeout_s=timeout_s)


class _InProcessConsole:
    """The in-process console, answering as the runner reads a console's terminal: the
    answer is what comes before the next ``=> `` prompt."""

    pid = None

    def __init__(self, console: inprocess.Console) -> None:
        self._console = console
        self.banner = _text(console.banner)
        if console.ended is not None:
            raise ConsoleUnavailable(f"the CLI console exited {console.ended} before its prompt")

    @property
    def alive(self) -> bool:
        return self._console.ended is None

    def run(self, command: str, *, confirm: bool = False) -> str:
        printed = _text(self._console.answer(command, "y" if confirm else "n"))
        if self._console.ended is not None:
            raise ConsoleDied(f"the CLI console exited {self._console.ended} during {command!r}")
        return printed

    def close(self) -> None:
        self._console.close()


def _text(printed: bytes) -> str:
    """What the console printed, up to its prompt."""
    return printed.decode("utf-8", errors="replace").removesuffix("=> ")
