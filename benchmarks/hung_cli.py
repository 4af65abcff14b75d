"""``smartarray-agent status --timeout T`` against a vendor CLI that hangs (prints nothing,
console or not): wall time of fresh processes, as min / median / max of ``--runs``, and how
many times the hung CLI was started in all (issue #50 item 6: a command that timed out is
not run again, so the command ends about T s after its start).

    python benchmarks/hung_cli.py [--runs 5] [--timeout 5] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from child import run_measured
from spread import machine, spread

HUNG = """#!{python}
import time
with open({started!r}, "a") as f:
    f.write("started\\n")
time.sleep(3600)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=5)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose installed agent is measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        started, program = work / "started", work / "ssacli"
        program.write_text(HUNG.format(python=sys.executable, started=str(started)))
        program.chmod(0o755)
        argv = [args.python, "-m", "smartarray_agent", "status", "--cli", str(program),
                "--timeout", f"{args.timeout:g}", "--lock-file", str(work / "cli.lock")]
        wall = [run_measured(argv, check=False, stderr=subprocess.DEVNULL).wall_s
                for _ in range(args.runs)]
        starts = len(started.read_text().splitlines())
    print(machine())
    print(f"status --timeout {args.timeout:g} against a CLI that hangs: wall "
          f"{spread(wall, 's')}; the CLI started {starts} times in {args.runs} runs")


if __name__ == "__main__":
    main()
