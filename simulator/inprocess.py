"""The simulator answering in the caller's process, the program's own steps (cli.py), for the
agent's ``--simulate`` (agent/simulated.py). A scenario whose faults only a process shows (a
hang, a delay, a garbled prompt, a flood) raises :class:`NeedsProcess` before anything runs:
the caller runs the program instead."""

from __future__ import annotations

import io
import os

from smartarray_agent.simulator import cli
from smartarray_agent.simulator.scenario import ScenarioError
from smartarray_agent.simulator.session import Crashed, Session


class NeedsProcess(Exception):
    """The scenario's faults need the simulator as a process."""


def run(scenario: str | os.PathLike[str], command: list[str]) -> tuple[int, bytes]:
    """``smartarray-sim --scenario SCENARIO COMMAND...``: its exit code and what it prints."""
    out = io.BytesIO()
    try:
        session = _open(scenario, out, command)
    except ScenarioError as error:
        return 2, f"smartarray-sim: {error}\n".encode()
    code = 1
    try:
        ended = cli.start(session, bypass_nonsa=True)
        code = ended if ended is not None else session.execute(command) or 0
    except Crashed as crash:
        code = crash.code
    finally:
        session.end(code)
    return code, out.getvalue()


class Console:
    """``smartarray-sim --scenario SCENARIO`` with no command: its console, one line at a
    time. ``banner`` is what it printed first, ``ended`` its exit code once it ended (at its
    start, at ``exit``, at a crash)."""

    def __init__(self, scenario: str | os.PathLike[str]) -> None:
        self.out = io.BytesIO()
        self.ended: int | None = None
        try:
            self.session: Session | None = _open(scenario, self.out, [])
        except ScenarioError as error:
            self.session, self.ended = None, 2
            self.out.write(f"smartarray-sim: {error}\n".encode())
        else:
            self._end_if(cli.start(self.session, bypass_nonsa=True))
        self.banner = self._printed()

    def answer(self, line: str, reply: str) -> bytes:
        """What it prints for ``line``, a (y/n) question it asks answered ``reply``."""
        assert self.session is not None and self.ended is None
        self.session.inp = _Typed(reply, self.out)
        try:
            self._end_if(None if cli.answer_line(self.session, line) else 0)
        except Crashed as crash:
            self._end_if(crash.code)
        return self._printed()

    def close(self) -> None:
        self._end_if(0)

    def _printed(self) -> bytes:
        data = self.out.getvalue()
        self.out.seek(0)
        self.out.truncate()
        return data

    def _end_if(self, code: int | None) -> None:
        if code is not None and self.ended is None:
            self.ended = code
            if self.session is not None:
                self.session.end(code)


class _Typed(io.StringIO):
    """An answer typed at the console, shown where it is read, as a terminal's transcript
    (the runner's, whose terminal does not echo) shows it."""

    def __init__(self, reply: str, shown: io.BytesIO) -> None:
        super().__init__(reply + "\n")
        self.shown = shown

    def readline(self, size: int = -1, /) -> str:  # type: ignore[override]  # as typeshed
        line = super().readline(size)
        self.shown.write(line.encode())
        return line


def _open(scenario: str | os.PathLike[str], out: io.BytesIO, command: list[str]) -> Session:
    session = cli.open_session(scenario, None, out, io.StringIO(), console=not command)
    faults = session.faults  # the agent skips the nonsa scan (bypass_nonsa)
    if (faults.hang or faults.flood or faults.prompt_garbled or faults.startup_delay_s
            or faults.command_delay_s):
        raise NeedsProcess(f"the scenario's faults need the simulator as a process: "
                           f"{faults.model_dump(exclude_defaults=True)}")
    session.begin(["smartarray-sim", "--scenario", str(scenario), *command])
    return session

