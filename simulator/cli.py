"""``smartarray-sim --scenario NAME [COMMAND...]``: one command (argv mode), or without one
the vendor banner and a ``=> `` prompt (console mode). Exit 0, 1 after an ``Error:``, 2 for a
bad scenario, as the vendor CLI."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from smartarray_agent.simulator import list_scenarios, render, resolve_scenario
from smartarray_agent.simulator.dialect import DIALECTS, LOCK_CONFLICT
from smartarray_agent.simulator.faults import effective_faults
from smartarray_agent.simulator.scenario import Faults, ScenarioError
from smartarray_agent.simulator.session import Crashed, Session
from smartarray_agent.simulator.state import StateStore, default_state_dir

SCENARIO_ENV = "SMARTARRAY_SIM_SCENARIO"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smartarray-sim",
        description="Answer like the HP/HPE Smart Array CLI for a scenario file.")
    parser.add_argument("--scenario", default=os.environ.get(SCENARIO_ENV),
                        help=f"bundled scenario name or file path (default: ${SCENARIO_ENV})")
    parser.add_argument("--state-dir", type=Path, help="state directory of this simulated host")
    parser.add_argument("--list", action="store_true", help="list the bundled scenarios")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="vendor command words")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.list:
        for name, description in list_scenarios():
            print(f"{name}\t{description}")
        return 0
    if not args.scenario:
        print(f"smartarray-sim: give --scenario or set {SCENARIO_ENV}", file=sys.stderr)
        return 2
    try:
        path = resolve_scenario(args.scenario)
        store = StateStore(args.state_dir or default_state_dir(path.stem), path)
        scenario, _ = store.load()  # validates the file when the state does not hold it yet
        faults = effective_faults(scenario)
    except ScenarioError as exc:
        print(f"smartarray-sim: {exc}", file=sys.stderr)
        return 2
    ident = os.urandom(16).hex()  # names this invocation in the log
    session = Session(store, DIALECTS[scenario.generation], faults, sys.stdout.buffer, sys.stdin,
                      ident, console=not args.command)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _exit_on_signal)
    mode = "argv" if args.command else "console"
    store.log("start", session.ident, pid=os.getpid(), argv=["smartarray-sim", *argv], mode=mode)
    code = 1
    try:
        code = _run(session, store, faults, args.command)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        raise
    except Crashed as crash:
        code = crash.code
    finally:
        store.log("end", session.ident, pid=os.getpid(), exit_code=code)
    return code


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _run(session: Session, store: StateStore, faults: Faults, command: list[str]) -> int:
    if faults.lock_conflict or (faults.single_instance and not store.claim_instance()):
        session.write(render.text(render.error(*LOCK_CONFLICT)))
        return 1
    delay = faults.startup_delay_s
    if os.environ.get("INFOMGR_BYPASS_NONSA") != "1":
        delay += faults.nonsa_scan_delay_s
    time.sleep(delay)
    if command:
        code = session.execute(command)
        return 0 if code is None else code
    if faults.console_refused:
        session.write(render.text(render.error("Error: The console is not available.")))
        return 1
    scenario, _ = store.load()
    session.write(render.text(render.banner(scenario, session.dialect)) + "=> ")
    while line := session.inp.readline():
        try:
            tokens = shlex.split(line)
        except ValueError:
            tokens = line.split()
        if session.execute(tokens) is None:
            break
        session.write(session.prompt())
    return 0
