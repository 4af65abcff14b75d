"""A stand-in for a vendor CLI that leaves a grandchild behind in a session of its own
(``setsid``), holding the CLI's standard output open: what a CLI's helper daemon can do
(issue #39, finding 6). The grandchild writes its pid to a file and sleeps."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCRIPT = """\
    #!{python}
    import os, subprocess, sys, time
    grandchild = subprocess.Popen(
        [{python!r}, "-c", "import time; time.sleep(300)"],
        start_new_session=True,  # setsid: out of the CLI's process group and session
        stdin=subprocess.DEVNULL)  # its standard output is the CLI's, inherited
    with open({pid_file!r}, "w") as f:
        f.write(str(grandchild.pid))
    if {hang!r}:
        time.sleep(300)
    print("the answer")
"""


def write(directory: Path, *, hang: bool) -> tuple[Path, Path]:
    """The CLI (``directory/ssacli``) and the file its grandchild's pid goes to. ``hang``: the
    CLI itself hangs after starting the grandchild; else it prints a line and exits."""
    program, pid_file = directory / "ssacli", directory / "grandchild.pid"
    program.write_text(textwrap.dedent(SCRIPT).format(
        python=sys.executable, pid_file=str(pid_file), hang=hang))
    program.chmod(0o755)
    return program, pid_file


def alive(pid_file: Path) -> bool:
    """Whether the grandchild still runs (a zombie does not count)."""
    pid = int(pid_file.read_text())
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@contextmanager
def cleaned_up(pid_file: Path) -> Iterator[None]:
    """Whatever the test finds, no grandchild is left running after it."""
    try:
        yield
    finally:
        if pid_file.exists() and alive(pid_file):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
