"""A stand-in for a vendor CLI that leaves a grandchild behind in a session of its own
(``setsid``), holding the CLI's standard output open (issue #39, finding 6), or with it sent to
/dev/null, fully detached (issue #50 item 7): what a CLI's helper daemon can do. The
grandchild writes its pid to a file and sleeps."""

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
        stdin=subprocess.DEVNULL, **{streams})
    with open({pid_file!r}, "a") as f:
        f.write(f"{{grandchild.pid}}\\n")
    if {then!r}:
        os.execv({then!r}[0], {then!r} + sys.argv[1:])
    if {hang!r}:
        time.sleep(300)
    print("the answer")
"""


def write(directory: Path, *, hang: bool = False, detached: bool = False,
          then: list[str] | None = None) -> tuple[Path, Path]:
    """The CLI (``directory/ssacli``) and the file its grandchild's pid goes to. ``hang``: the
    CLI itself hangs after starting the grandchild; else it prints a line and exits.
    ``detached``: the grandchild's output goes to /dev/null (it holds nothing of the CLI's);
    ``then``: the CLI then becomes that program (its argv prefix), with the CLI's arguments."""
    program, pid_file = directory / "ssacli", directory / "grandchild.pid"
    streams = "dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)" if detached else "{}"
    program.write_text(textwrap.dedent(SCRIPT).format(
        python=sys.executable, pid_file=str(pid_file), hang=hang, streams=streams,
        then=then or []))
    program.chmod(0o755)
    return program, pid_file


def pids(pid_file: Path) -> list[int]:
    """The grandchildren left so far, one for each time the CLI ran."""
    return [int(pid) for pid in pid_file.read_text().split()] if pid_file.exists() else []


def alive(pid_file: Path) -> bool:
    """Whether a grandchild still runs (a zombie does not count)."""
    return any(_running(pid) for pid in pids(pid_file))


def _running(pid: int) -> bool:
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
        for pid in pids(pid_file):
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
