"""Collection wall time, one-shot vs console, against the simulator.

The simulated CLI takes a start-up delay and a per-command delay (defaults 2 s and 0.2 s,
like a real ssacli on a loaded box). For 1, 4 and 8 controllers (the first N controllers of
the bundled ``large`` scenario, 24 drives each) it prints the mean wall time of a
steady-state collection (collections 2 to N) one-shot and through the console, the console's
first collection (start-up included), the ratio console/one-shot, vendor calls per
steady-state collection (the first one-shot collection also asks the CLI its version once)
and the CLI processes started in all.

    python benchmarks/collect_bench.py [--startup 2] [--per-command 0.2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import tomllib
from pathlib import Path

from smartarray_agent.collectors.simulator import resolve_scenario, vendor_argv
from smartarray_agent.collectors.ssacli.collector import read_snapshot
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner


def scenario_with(controllers: int, directory: Path) -> Path:
    large = tomllib.loads(resolve_scenario("large").read_text())
    large["controllers"] = large["controllers"][:controllers]
    large["description"] = f"benchmark: {controllers} controllers"
    path = directory / f"bench-{controllers}.json"
    path.write_text(json.dumps(large))
    return path


def measure(cli: VendorCli, lock: Path, console: bool, rounds: int) -> dict:
    runner = VendorRunner(cli, HostLock(lock, 120), timeout_s=120, console=console)
    times = []
    first_calls = 0
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            snapshot = read_snapshot(runner)
            times.append(time.perf_counter() - started)
            assert snapshot.controllers
            if len(times) == 1:
                first_calls = runner.stats.commands
    finally:
        runner.close()
    stats = runner.stats
    steady_calls = stats.commands - first_calls
    return {
        "first": times[0],
        "steady": statistics.mean(times[1:]) if len(times) > 1 else times[0],
        "calls": steady_calls / (rounds - 1) if rounds > 1 else stats.commands,
        "starts": stats.process_starts,
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--startup", type=float, default=2.0)
    options.add_argument("--per-command", type=float, default=0.2)
    options.add_argument("--rounds", type=int, default=5)
    options.add_argument("--controllers", type=int, nargs="+", default=[1, 4, 8])
    args = options.parse_args()
    os.environ["SMARTARRAY_SIM_FAULTS"] = json.dumps(
        {"startup_delay_s": args.startup, "command_delay_s": args.per_command}
    )
    print(f"simulated CLI: start-up {args.startup:g} s, {args.per_command:g} s per command; "
          f"{args.rounds} collections per mode")
    print(f"{'ctrls':>5} {'one-shot s':>10} {'console 1st':>11} {'console s':>9} "
          f"{'ratio':>6} {'calls/coll':>10} {'CLI starts in all (1shot, console)':>35}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for count in args.controllers:
            scenario = scenario_with(count, tmp_path)
            cli = VendorCli(tuple(vendor_argv(str(scenario), state_dir=tmp_path / f"s{count}")),
                            "simulator")
            lock = tmp_path / "cli.lock"
            one = measure(cli, lock, False, args.rounds)
            con = measure(cli, lock, True, args.rounds)
            print(f"{count:>5} {one['steady']:>10.3f} {con['first']:>11.3f} {con['steady']:>9.3f} "
                  f"{con['steady'] / one['steady']:>6.3f} {con['calls']:>10.1f} "
                  f"{one['starts']:>17d} {con['starts']:>17d}")


if __name__ == "__main__":
    main()
