"""What a vendor CLI that prints far past ``MAX_OUTPUT_BYTES`` costs one collection, one-shot
and through a console: wall time and peak RSS of a small, fresh interpreter that runs
one ``ctrl all show config detail`` while the simulator floods (min, median, max of ``--runs``).

    cd benchmarks && python flood_bench.py [--runs 3] [--flood-mb 300]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from child import run_measured
from spread import machine, spread

# Run in a child: this process's own pages would count in a forked child's peak RSS.
_ROUND = """import sys
from pathlib import Path
from smartarray_agent.simulator import vendor_argv
from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.errors import CliOutputTooLarge
from smartarray_agent.collectors.ssacli.runner import VendorRunner
runner = VendorRunner(VendorCli(tuple(vendor_argv("gen9-battery")), "simulator"),
                      HostLock(Path(sys.argv[1]), 10), timeout_s=120)
try:
    runner.run(["ctrl", "all", "show", "config", "detail"])
    sys.exit("the flood was not refused")
except CliOutputTooLarge:
    pass
"""


def one_round(mode: str, flood_bytes: int, folder: str) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one refused collection."""
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": f"{folder}/sim-{mode}",
           "SMARTARRAY_SIM_FAULTS": json.dumps({"flood": ["*"], "flood_bytes": flood_bytes,
                                                   "console_refused": mode == "one-shot"})}
    measured = run_measured([sys.executable, "-c", _ROUND, f"{folder}/cli.lock"],
                            env=env, stderr=subprocess.DEVNULL,
                            failure=f"{mode}: the round did not end in CliOutputTooLarge")
    return measured.wall_s, measured.peak_rss_mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--flood-mb", type=int, default=300)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as folder:
        for mode in ("one-shot", "console"):
            rounds = [one_round(mode, args.flood_mb * 10**6, folder) for _ in range(args.runs)]
            print(f"{mode}, {args.flood_mb} MB printed: "
                  f"{spread([s for s, _ in rounds], 's')}; "
                  f"peak RSS {spread([m for _, m in rounds], 'MiB', 1)}")


if __name__ == "__main__":
    main()
