"""What years of audit history cost a reader (issue #50 item 5): ``check`` on the simulator
with an audit log of 300 MB (369,660 records of the size the write path writes), laid out
as the shipped logrotate leaves it (a file per 10 MB, renamed ``audit.jsonl-YYYYMMDD-EPOCH``,
all but the newest compressed), against ``check`` with no history, run alternately. The
first run with the history is shown apart: it reads the history once, and every later
reader goes on from where it stopped.

    python benchmarks/audit_history.py [--runs 5] [--megabytes 300] [--python PYTHON]

Target: ``check`` with the history at most twice its time without, or 1 s more.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from child import run_measured
from spread import machine, spread

ROTATE_BYTES = 10 * 1024 * 1024  # packaging/logrotate: size 10M
EPOCH = 1_700_000_000


def record(number: int, event: str, ident: str) -> dict:
    """An audit record as the write path writes one (docs/cli.md, "The audit record"),
    about 810 bytes long, as in issue #50's measurement."""
    return {
        "time": "2026-11-24T10:00:00.000+00:00", "user": "alice (via sudo as root)",
        "host": "db1.example.org", "id": ident, "event": event,
        "outcome": "changed" if event == "outcome" else None,
        "verdict": "allowed" if event == "intent" else None,
        "controller": {"slot": "0", "model": "Smart Array P440ar", "serial": "PDNLH0BRH7X32P"},
        "requested": {"kind": "cache-ratio", "read_percent": number % 100,
                      "write_percent": 100 - number % 100},
        "before": {"cache_ratio": "10/90", "no_battery_write_cache": False,
                   "drive_write_cache": False, "logical_drive_caching": {"1": True, "2": True}},
        "after": None if event == "intent" else {
            "cache_ratio": f"{number % 100}/{100 - number % 100}",
            "no_battery_write_cache": False, "drive_write_cache": False,
            "logical_drive_caching": {"1": True, "2": True}},
        "command": ["ctrl", "slot=0", "modify", f"cacheratio={number % 100}/{100 - number % 100}"],
        "backup_power": "batteries ok", "threshold_percent": 80.0, "charge_percent": None,
        "charge_read_at": None, "unprotected": False, "interrupted": None,
        "message": "Smart Array P440ar in slot 0: cache ratio 25/75",
    }


def build_history(audit: Path, megabytes: int) -> int:
    """Intent and outcome pairs until ``megabytes`` are written, rotated every 10 MB as
    logrotate would (the newest rotated file left uncompressed: delaycompress); the records
    written."""
    chunk: list[bytes] = []
    size = total = written = rotations = 0
    while total < megabytes * 1_000_000:
        ident = uuid.uuid4().hex
        for event in ("intent", "outcome"):
            line = json.dumps(record(written, event, ident), separators=(",", ":")).encode()
            chunk.append(line + b"\n")
            size += len(line) + 1
            total += len(line) + 1
            written += 1
        if size >= ROTATE_BYTES:
            rotations += 1
            rotated = audit.with_name(f"{audit.name}-20261124-{EPOCH + rotations}")
            rotated.write_bytes(b"".join(chunk))
            chunk, size = [], 0
    audit.write_bytes(b"".join(chunk))
    for older in sorted(audit.parent.glob(f"{audit.name}-*"))[:-1]:
        older.with_name(older.name + ".gz").write_bytes(gzip.compress(older.read_bytes(), 6))
        older.unlink()
    return written


def host(directory: Path) -> list[str]:
    """The options of ``check`` on a simulated host whose audit file is in ``directory``."""
    config = directory / "agent.toml"
    config.write_text(f'[audit]\nfile = "{directory / "audit.jsonl"}"\n'
                      '[sysfs]\nenabled = false\n')
    return ["check", "--simulate", "gen9-battery", "--config", str(config),
            "--lock-file", str(directory / "cli.lock")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--megabytes", type=int, default=300)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose installed agent is measured")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="audit-history-") as scratch:
        empty, full = Path(scratch) / "empty", Path(scratch) / "full"
        empty.mkdir()
        full.mkdir()
        records = build_history(full / "audit.jsonl", args.megabytes)
        on_disk = sum(f.stat().st_size for f in full.glob("audit.jsonl*"))
        print(f"history: {records:,} records, {args.megabytes} MB written, "
              f"{on_disk / 1e6:.0f} MB on disk in {len(list(full.glob('audit.jsonl*')))} files")
        env = dict(os.environ, SMARTARRAY_SIM_STATE_DIR=str(Path(scratch) / "sim"))

        def wall(directory: Path) -> float:
            argv = [args.python, "-m", "smartarray_agent", *host(directory)]
            return run_measured(argv, env=env, check=False).wall_s

        first = wall(full)
        without, with_history = [], []
        for _ in range(args.runs):
            without.append(wall(empty))
            with_history.append(wall(full))
    print(f"check, first run with the history: {first:.2f} s")
    print(f"check without history: {spread(without, 's')}")
    print(f"check with the history: {spread(with_history, 's')}")
    base, loaded = statistics.median(without), statistics.median(with_history)
    met = loaded <= max(2 * base, base + 1)
    print(f"median with / without: {loaded / base:.2f}x, +{loaded - base:.2f} s; target at "
          f"most 2x or +1 s: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
