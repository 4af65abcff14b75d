"""What a big host costs ``run`` (issue #50 items 1 and 2): a vendor CLI (a shell script)
prints either N controllers that all say ``Slot: 0`` (``--controllers``), or the simulator's
``large`` answer repeated to about M MiB (``--answer-mib``, 16 is the output cap). ``run``
collects every ``--interval`` seconds and publishes into a ``publish_dir`` (the packaged
unit's shape), under ``NOTIFY_SOCKET`` and ``WATCHDOG_USEC`` as systemd would start it.

Per run: seconds from the start to ``READY=1``, the longest gap between two of the agent's
notifications (``READY=1``, then every ``WATCHDOG=1``) while it collects ``--rounds`` rounds,
the CPU seconds the agent used and its peak resident memory (``VmHWM``), read from ``/proc``
before it is stopped; min / median / max of ``--runs``.

    cd benchmarks
    python big_host_bench.py --controllers 500 1000 2000 4000 --runs 3
    python big_host_bench.py --answer-mib 1 4 16 --runs 3
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from spread import machine, spread

from smartarray_agent.simulator import vendor_argv

TICK_S = 1 / os.sysconf("SC_CLK_TCK")
WATCHDOG_S = 600  # the unit's WatchdogSec=
SAME_SLOT = "Smart Array P410i in Slot 0 (Embedded)\n   Slot: 0\n   Controller Status: OK\n\n"


@dataclass(frozen=True)
class Figures:
    ready_s: float
    longest_gap_s: float  # between two notifications, READY=1 included
    cpu_s: float
    peak_mib: float


def same_slot(controllers: int) -> str:
    return "\n" + SAME_SLOT * controllers


def large_repeated(mib: float, folder: Path) -> str:
    """The ``large`` scenario's answer (8 controllers, 24 drives each), repeated to at most
    ``mib``."""
    large = subprocess.run([*vendor_argv("large", folder / "sim"), "ctrl", "all", "show",
                            "config", "detail"], capture_output=True, text=True,
                           check=True).stdout
    return large * max(1, int(mib * 2**20 // len(large)))


def fake_cli(folder: Path, answer: str) -> Path:
    (folder / "answer.txt").write_text(answer)
    program = folder / "ssacli"
    program.write_text(
        "#!/bin/sh\n"
        f"case \"$*\" in\n"
        f"  'ctrl all show config detail') exec cat '{folder}/answer.txt' ;;\n"
        "  version) echo 'SSACLI Version: 6.45-8.0 2024-09-26' ;;\n"
        "  *) exit 9 ;;\n"
        "esac\n")
    program.chmod(0o755)
    return program


def proc_status(pid: int, key: str) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                if x.startswith(f"{key}:"))
    return int(line.split()[1]) / 1024


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def one_run(python: str, folder: Path, cli: Path, rounds: int, interval_s: float,
            deadline_s: float) -> Figures:
    run = Path(tempfile.mkdtemp(dir=folder))
    publish = run / "publish"
    publish.mkdir(mode=0o750)
    config = run / "agent.toml"
    config.write_text(f'[ssacli]\npath = "{cli}"\nlock_file = "{run}/cli.lock"\n'
                      f"[collect]\ninterval_s = {interval_s}\n"
                      f'[web]\npublish_dir = "{publish}"\n[sysfs]\nenabled = false\n')
    address = str(run / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(address)
        env = {**os.environ, "NOTIFY_SOCKET": address,
               "WATCHDOG_USEC": str(WATCHDOG_S * 10**6)}
        started = time.monotonic()
        agent = subprocess.Popen([python, "-m", "smartarray_agent", "run", "--config",
                                  str(config), "--log-level", "warning"],
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        ready_at: float | None = None
        notes: list[float] = []
        done = 0
        try:
            while done < rounds:
                left = started + deadline_s - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"no {rounds} rounds in {deadline_s:g} s")
                notify.settimeout(left)
                message = notify.recv(65536).decode()
                now = time.monotonic()
                if "STATUS=ssacli failed" in message:
                    raise SystemExit(f"the collection failed: {message}")
                if "READY=1" in message:
                    ready_at = ready_at or now
                    notes.append(now)
                elif "WATCHDOG=1" in message:
                    notes.append(now)
                done += "STATUS=ssacli ok" in message
            peak, cpu = proc_status(agent.pid, "VmHWM"), proc_cpu_s(agent.pid)
        finally:
            agent.send_signal(signal.SIGTERM)
            agent.wait(30)
    assert ready_at is not None
    gaps = [b - a for a, b in zip([started, *notes], notes, strict=False)]
    return Figures(ready_at - started, max(gaps), cpu, peak)


def report(what: str, figures: list[Figures]) -> None:
    print(f"{what}:\n"
          f"  READY=1 after  {spread([f.ready_s for f in figures], 's')}\n"
          f"  longest gap    {spread([f.longest_gap_s for f in figures], 's')} "
          f"(WatchdogSec={WATCHDOG_S})\n"
          f"  agent CPU      {spread([f.cpu_s for f in figures], 's')}\n"
          f"  VmHWM          {spread([f.peak_mib for f in figures], 'MiB', 1)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controllers", type=int, nargs="*", default=[])
    parser.add_argument("--answer-mib", type=float, nargs="*", default=[])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="collections per run")
    parser.add_argument("--interval", type=float, default=5.0, help="[collect] interval_s")
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        cases = [(f"{n} controllers in slot 0", same_slot(n)) for n in args.controllers]
        cases += [(f"`large` repeated to {m:g} MiB", large_repeated(m, folder))
                  for m in args.answer_mib]
        for what, answer in cases:
            cli = fake_cli(Path(tempfile.mkdtemp(dir=folder)), answer)
            lines = answer.count("\n")
            figures = [one_run(args.python, folder, cli, args.rounds, args.interval,
                               args.deadline) for _ in range(args.runs)]
            report(f"{what} ({len(answer.encode()) / 2**20:.2f} MiB, {lines} lines, "
                   f"{args.rounds} rounds)", figures)


if __name__ == "__main__":
    main()
