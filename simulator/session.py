"""Vendor commands answered from a state directory, with the scenario's faults: one command
in argv mode, one a line in console mode."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from smartarray_agent.simulator import render
from smartarray_agent.simulator.commands import (
    Action,
    CommandError,
    Modify,
    SetTarget,
    Show,
    Simple,
    Target,
    canonical,
    invalid_target,
    parse,
    syntax_error,
)
from smartarray_agent.simulator.dialect import CONTINUE_PROMPT, Dialect
from smartarray_agent.simulator.faults import at_time, garbage, matches
from smartarray_agent.simulator.modify import FORMS, apply, plan
from smartarray_agent.simulator.scenario import Controller, Faults, Scenario
from smartarray_agent.simulator.state import StateStore

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

_HELP = [
    "",
    "Commands this simulator answers:",
    "   <target> show [status|detail|config detail]",
    *(f"   <target> {form.help()}" for form in FORMS),
    "   <target> ld all modify ...      forced on any modify",
    "   set target <target>      version      help      exit",
    '   <target>: "ctrl all" or "ctrl slot=N"',
    "",
]


class Crashed(Exception):  # the crash fault fired: the process ends now with ``code``
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Hung(Exception):
    """The hang fault fired: a process hangs for real; one in the caller's process cannot."""


class Session:
    """One simulator run answering commands: a process, or in the caller's process."""

    def __init__(self, store: StateStore, dialect: Dialect, faults: Faults, out: BinaryIO,
                 inp: TextIO, ident: str, *, console: bool = False) -> None:
        self.store, self.dialect, self.faults = store, dialect, faults
        self.out, self.inp, self.ident = out, inp, ident
        self.console = console  # console mode: the faults that are console_only hit it
        self.target: Target | None = None
        self.garble_prompt = False  # the last command asked for a garbled prompt after it
        self.instance: int | None = None  # the single-instance lock, while held

    def begin(self, argv: list[str]) -> None:
        """Log the run's start."""
        self.store.log("start", self.ident, pid=os.getpid(), argv=argv,
                       mode="console" if self.console else "argv")

    def end(self, code: int) -> None:
        """Let go of the single-instance lock and log the run's end."""
        if self.instance is not None:
            os.close(self.instance)
            self.instance = None
        self.store.log("end", self.ident, pid=os.getpid(), exit_code=code)

    def hits(self, patterns: list[str], command: str) -> bool:  # in this mode
        return (self.console or not self.faults.console_only) and matches(patterns, command)

    def prompt(self) -> bytes:
        """The console's ``=> ``, or after a ``prompt_garbled`` command bytes that are not."""
        if not self.garble_prompt:
            return b"=> "
        return garbage("prompt", 64).replace(b"=", b"?")

    def write(self, data: str | bytes) -> None:
        self.out.write(data.encode() if isinstance(data, str) else data)
        self.out.flush()

    def execute(self, tokens: list[str]) -> int | None:
        """Answer one command; the exit code it earns, or None for ``exit``."""
        command = canonical(tokens)
        if not command:
            return 0
        if command == "exit":
            return None
        self.store.log("command", self.ident, command=command)
        self.garble_prompt = self.hits(self.faults.prompt_garbled, command)
        time.sleep(self.faults.command_delay_s)
        if self.hits(self.faults.hang, command):
            raise Hung(command)
        if self.hits(self.faults.garbage, command):
            self.write(garbage(command) + b"\n")
            return 0
        if matches(self.faults.flood, command):
            self._flood(self.faults.flood_bytes)
        try:
            lines, code = self._answer(parse(tokens, self.target)), 0
        except CommandError as exc:
            lines, code = render.error(*exc.lines), 1
        output = render.text(lines) if lines else ""
        if self.hits(self.faults.crash, command):
            self.write(output[: len(output) // 2])
            raise Crashed(self.faults.crash_exit_code)
        self.write(output)
        return code

    def _flood(self, size: int) -> None:
        """``size`` bytes of plausible lines, a MiB at a time (the simulator stays small)."""
        line = b"   Controller Status: OK" + b" " * 999 + b"\n"
        block = line * (2**20 // len(line) + 1)
        while size > 0:
            self.write(block[:size])
            size -= len(block)

    def _scenario(self) -> Scenario:
        scenario, created = self.store.load()
        return at_time(scenario, self.faults, time.time() - created)

    def _controllers(self, scenario: Scenario, target: Target) -> list[Controller]:
        if self.faults.no_controllers or not scenario.controllers:
            raise CommandError(*self.dialect.no_controllers)
        if target.slot is None:
            return scenario.controllers
        ctrl = scenario.controller(target.slot)
        if ctrl is None:
            raise invalid_target(target.slot)
        return [ctrl]

    def _answer(self, action: Action) -> render.Lines:
        if isinstance(action, Simple):
            if action.name == "version":
                return render.version(self._scenario(), self.dialect)
            return _HELP
        if isinstance(action, SetTarget):
            self._controllers(self._scenario(), action.target)
            self.target = action.target
            return ["", f'   "{action.target.text()}"', ""]
        if isinstance(action, Show):
            return self._show(action)
        return self._modify(action)

    def _show(self, action: Show) -> render.Lines:
        ctrls = self._controllers(self._scenario(), action.target)
        return render.show(self.dialect, action.what, ctrls)

    def _modify(self, action: Modify) -> render.Lines:
        if action.target.slot is None:
            raise syntax_error("modify")
        ctrl = self._controllers(self._scenario(), action.target)[0]
        result = plan(ctrl, self.dialect, action)
        if result.answer:
            return result.answer
        asks = result.confirm or (self.hits(self.faults.prompt, action.command)
                                  and not action.forced)
        if asks and not self._confirmed():
            return []
        if result.changes and not self.faults.ignore_modify:
            self.store.update(lambda scenario: apply(scenario, result.changes))
        return []

    def _confirmed(self) -> bool:
        self.write("\n" + "\n".join(self.dialect.dwc_warning) + "\n" + CONTINUE_PROMPT)
        answer = self.inp.readline()
        self.write("\n")
        return answer.strip().lower() in ("y", "yes")

