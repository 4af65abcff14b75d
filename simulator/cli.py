"""``smartarray-sim`` (docs/cli.md, "simulate run"): exit 0, 1 after an ``Error:``, 2 for a
bad scenario, as the vendor CLI. Its steps (:func:`open_session`, :func:`start`,
:func:`answer_line`) also answer in the caller's process (:mod:`.inprocess`), byte for byte."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from smartarray_agent.simulator import render, resolve_scenario
from smartarray_agent.simulator.dialect import DIALECTS, LOCK_CONFLICT
from smartarray_agent.simulator.faults import effective_faults
from smartarray_agent.simulator.scenario import ScenarioError
from smartarray_agent.simulator.session import Crashed, Hung, Session
from smartarray_agent.simulator.state import StateStore, default_state_dir

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

SCENARIO_ENV = "SMARTARRAY_SIM_SCENARIO"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smartarray-sim",
        description="Answer like the HP/HPE Smart Array CLI for a scenario file (the bundled "
                    "ones: smartarray-agent simulate list).")
    parser.add_argument("--scenario", default=os.environ.get(SCENARIO_ENV),
                        help=f"bundled scenario name or file path (default: ${SCENARIO_ENV})")
    parser.add_argument("--state-dir", type=Path, help="state directory of this simulated host")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="vendor command words")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if not args.scenario:
        print(f"smartarray-sim: give --scenario or set {SCENARIO_ENV}", file=sys.stderr)
        return 2
    try:
        session = open_session(args.scenario, args.state_dir, sys.stdout.buffer, sys.stdin,
                               console=not args.command)
    except ScenarioError as exc:
        print(f"smartarray-sim: {exc}", file=sys.stderr)
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _exit_on_signal)
    session.begin(["smartarray-sim", *argv])
    code = 1
    try:
        code = _run(session, args.command)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        raise
    except Crashed as crash:
        code = crash.code
    finally:
        session.end(code)
    return code


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def open_session(scenario: str | os.PathLike[str], state_dir: Path | None, out: BinaryIO,
                 inp: TextIO, *, console: bool) -> Session:
    """One run of the simulator on ``scenario``'s host; ScenarioError for a scenario or a
    state directory it cannot use."""
    path = resolve_scenario(scenario)
    store = StateStore(state_dir or default_state_dir(path.stem), path)
    loaded, _ = store.load()  # validates the file when the state does not hold it yet
    return Session(store, DIALECTS[loaded.generation], effective_faults(loaded), out, inp,
                   os.urandom(16).hex(), console=console)


def start(session: Session, *, bypass_nonsa: bool) -> int | None:
    """What the CLI does before its first command: the vendor's single-instance lock, the
    start-up delays, and a console's banner and first prompt. The exit code where it ends
    there, else None."""
    faults = session.faults
    if not faults.lock_conflict and faults.single_instance:
        session.instance = session.store.claim_instance()
    if faults.lock_conflict or (faults.single_instance and session.instance is None):
        session.write(render.text(render.error(*LOCK_CONFLICT)))
        return 1
    time.sleep(faults.startup_delay_s + (0 if bypass_nonsa else faults.nonsa_scan_delay_s))
    if not session.console:
        return None
    if faults.console_refused:
        session.write(render.text(render.error("Error: The console is not available.")))
        return 1
    scenario, _ = session.store.load()
    session.write(render.text(render.banner(scenario, session.dialect)) + "=> ")
    return None


def answer_line(session: Session, line: str) -> bool:
    """Answer one console line and show the next prompt; False at ``exit``."""
    try:
        tokens = shlex.split(line)
    except ValueError:
        tokens = line.split()
    if session.execute(tokens) is None:
        return False
    session.write(session.prompt())
    return True


def _run(session: Session, command: list[str]) -> int:
    code = start(session, bypass_nonsa=os.environ.get("INFOMGR_BYPASS_NONSA") == "1")
    if code is not None:
        return code
    try:
        if command:
            code = session.execute(command)
            return 0 if code is None else code
        while (line := session.inp.readline()) and answer_line(session, line):
            pass
    except Hung:  # a process hangs for real, until whoever runs it ends it
        while True:
            time.sleep(3600)
    return 0
