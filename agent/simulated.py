"""The bundled simulator as the vendor CLI for ``--simulate`` and ``[ssacli] simulate``: it
answers in this process (simulator/inprocess.py) through the runner's seam
(collectors/ssacli/runner.py, ``Vendor``), with the program's own bytes; a scenario whose
faults only a process shows (a hang, a delay, a garbled prompt, a flood) runs the program
instead, as ``--cli`` does, under the runner's timeouts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.errors import ConsoleDied, ConsoleUnavailable
from smartarray_agent.collectors.ssacli.run import CliResult
from smartarray_agent.collectors.ssacli.runner import Console
from smartarray_agent.simulator import inprocess, vendor_argv


class SimulatedCli:
    """The simulator on ``scenario``'s host, as a :class:`~.runner.Vendor`."""

    def __init__(self, scenario: Path) -> None:
        self.scenario = scenario
        self.program = VendorCli(tuple(vendor_argv(scenario)), "simulator")
        self.argv, self.name = self.program.argv, self.program.name

    def run(self, command: list[str], *, timeout_s: float,
            started: Callable[[int], None] | None = None) -> CliResult:
        try:
            code, output = inprocess.run(self.scenario, command)
        except inprocess.NeedsProcess:
            return self.program.run(command, timeout_s=timeout_s, started=started)
        return CliResult((*self.argv, *command), code, output.decode("utf-8", errors="replace"))

    def console(self, *, timeout_s: float) -> Console:
        try:
            return _InProcessConsole(inprocess.Console(self.scenario))
        except inprocess.NeedsProcess:
            return self.program.console(timeout_s=timeout_s)


class _InProcessConsole:
    """The in-process console, answering as the runner reads a console's terminal: the
    answer is what comes before the next ``=> `` prompt."""

    pid = None

    def __init__(self, console: inprocess.Console) -> None:
        self._console = console
        self.banner = self._printed()
        if console.ended is not None:
            raise ConsoleUnavailable(f"the CLI console exited {console.ended} before its prompt")

    @property
    def alive(self) -> bool:
        return self._console.ended is None

    def run(self, command: str, *, confirm: bool = False) -> str:
        self._console.answer(command, "y" if confirm else "n")
        printed = self._printed()
        if self._console.ended is not None:
            raise ConsoleDied(f"the CLI console exited {self._console.ended} during {command!r}")
        return printed

    def close(self) -> None:
        self._console.close()

    def _printed(self) -> str:
        """What the console printed, up to its prompt."""
        return self._console.printed().decode("utf-8", errors="replace").removesuffix("=> ")
