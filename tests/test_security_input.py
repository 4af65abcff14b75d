"""``status --input`` against inputs built to hurt (issue 17, item 7): a file near the old
64 MiB cap, the same on standard input, a FIFO and a device. Each is refused at once, in
little memory, with one line that says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from smartarray_agent.cli.inputs import MAX_BYTES

from .captures import REAL, needs_captures

CAPTURE = REAL / "hpacucli-ctrl-all-show-config-detail-P410i-P800-1.txt"


# Runs the command from a small, fresh interpreter and prints its peak RSS: measured from
# this test process, a forked child's peak would include this (large) process's pages.
_MEASURE = """import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""


def status(*args: str, stdin: int | None = None) -> tuple[int, str, int]:
    """Exit code, stderr and peak RSS (KiB) of ``smartarray-agent status --json ARGS``."""
    process = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "smartarray_agent", "status",
         "--json", *args],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=300)
    rss_kib, code = (int(word) for word in process.stdout.split()[-2:])
    return code, process.stderr, rss_kib


@pytest.fixture(scope="module")
def huge(tmp_path_factory) -> Path:
    """62.7 MB of a real capture repeated: what took 49.5 s and 3.6 GB before."""
    text = CAPTURE.read_bytes()
    path = tmp_path_factory.mktemp("input") / "huge.txt"
    with path.open("wb") as handle:  # piecewise: a big buffer here would show in the child
        for _ in range(62_700_000 // len(text)):
            handle.write(text)
    return path


@needs_captures
def test_a_file_over_the_cap_is_refused_at_the_cap(huge):
    code, errors, rss_kib = status("--input", str(huge))
    assert (code, errors) == (2, f"smartarray-agent: {huge} is larger than 4 MiB: no Smart "
                                 "Array CLI output is that long\n")
    assert rss_kib < 100 * 1024


@needs_captures
def test_standard_input_over_the_cap_is_refused_after_the_cap(huge):
    with huge.open("rb") as handle:
        code, errors, rss_kib = status("--input", "-", stdin=handle.fileno())
    assert code == 2 and "standard input is larger than 4 MiB" in errors
    assert rss_kib < 100 * 1024


@needs_captures
def test_a_capture_within_the_cap_is_parsed(tmp_path):
    text = CAPTURE.read_bytes()
    path = tmp_path / "capture.txt"
    path.write_bytes(text * 20)
    assert path.stat().st_size < MAX_BYTES
    code, errors, _ = status("--input", str(path))
    assert (code, errors) == (0, "")


def test_fifos_and_devices_are_refused_without_waiting(tmp_path):
    fifo = tmp_path / "capture.fifo"
    os.mkfifo(fifo)
    code, errors, _ = status("--input", str(fifo))
    assert (code, errors) == (2, f"smartarray-agent: {fifo} is not a regular file (a FIFO or "
                                 "device is refused; use --input - to read a pipe)\n")
    code, errors, _ = status("--input", "/dev/zero")
    assert code == 2 and "/dev/zero is not a regular file" in errors
    code, errors, _ = status("--input", str(tmp_path))
    assert code == 2 and "is a directory, not a file" in errors
