"""How much a command costs to start: ``status --input FILE --json`` against a bare
``python -c pass`` of the same interpreter, in CPU time (user + system, which the load of other
processes changes less than wall time) and wall time; min, median and max of several runs,
and the ratio of the medians. Also the size of what the package installs beside itself.

    python benchmarks/startup_bench.py [--runs 15] [--capture FILE]

The capture defaults to a bundled scenario's output, rendered once by the simulator.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return cpu, wall


def spread(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return f"min {ms[0]:7.1f}  median {statistics.median(ms):7.1f}  max {ms[-1]:7.1f} ms"


def installed_size() -> tuple[int, int]:
    """Bytes and files of every distribution installed in this environment."""
    total = files = 0
    for dist in importlib.metadata.distributions():
        for file in dist.files or ():
            path = Path(dist.locate_file(file))
            if path.is_file():
                total += path.stat().st_size
                files += 1
    return total, files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--capture", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        capture = args.capture
        if capture is None:
            capture = Path(directory) / "capture.txt"
            env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=directory)
            capture.write_bytes(subprocess.run(
                [sys.executable, "-m", "smartarray_agent", "simulate", "run", "two-controllers",
                 "--", "ctrl", "all", "show", "config", "detail"],
                capture_output=True, check=True, env=env).stdout)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "status --input FILE --json": [sys.executable, "-m", "smartarray_agent", "status",
                                           "--input", str(capture), "--json"],
            "check --input FILE": [sys.executable, "-m", "smartarray_agent", "check",
                                   "--input", str(capture)],
            "--help": [sys.executable, "-m", "smartarray_agent", "--help"],
        }
        # check exits 0-3 by design; run it through a shell-free wrapper that ignores that.
        commands["check --input FILE"] = [sys.executable, "-c",
                                          "import subprocess, sys; subprocess.run(sys.argv[1:])",
                                          *commands["check --input FILE"]]
        print(f"{platform.python_implementation()} {platform.python_version()}, "
              f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, "
              f"{args.runs} runs each")
        results = {}
        for name, argv in commands.items():
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm
            results[name] = measure(argv, args.runs)
            cpu, wall = results[name]
            print(f"{name:28s} CPU  {spread(cpu)}")
            print(f"{'':28s} wall {spread(wall)}")
    base_cpu = statistics.median(results["python -c pass"][0])
    for name in ("status --input FILE --json", "check --input FILE", "--help"):
        ratio = statistics.median(results[name][0]) / base_cpu
        print(f"{name:28s} {ratio:5.1f} x the CPU of python -c pass (median over median)")
    size, files = installed_size()
    print(f"installed in this environment: {size / 2**20:.1f} MiB in {files} files")


if __name__ == "__main__":
    main()
