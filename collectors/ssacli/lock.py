"""One lock for every vendor CLI call on the host: the daemon's and the CLI's alike.

The vendor CLI refuses to run twice at once (``Error: Another instance of ACU is already
running``), so every caller takes an exclusive ``flock`` on one file first. The kernel frees
the lock when its holder dies, so a crashed holder never blocks the host. The holder writes
its pid into the file so a waiter can name it.

A holder may keep the lock for a long time (the daemon keeps its console session, and so the
lock, between collections). A waiter announces itself with a shared lock on a second file,
``<lock>.wait``; the holder checks :meth:`HostLock.others_waiting` between commands and
lets go.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

POLL_S = 0.05
DEFAULT_SYSTEM_PATH = Path("/run/smartarray-agent/cli.lock")


class LockTimeout(RuntimeError):
    def __init__(self, path: Path, wait_s: float, holder: int | None) -> None:
        self.holder = holder
        who = f"pid {holder}" if holder else "another process"
        super().__init__(
            f"the Smart Array CLI lock {path} is held by {who}; gave up after {wait_s:g} s"
        )


def default_lock_path() -> Path:
    """``/run/smartarray-agent/cli.lock`` for root (the daemon, the operator's CLI); a
    per-user runtime directory otherwise, where only the simulator can be run anyway."""
    if os.geteuid() == 0:
        return DEFAULT_SYSTEM_PATH
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(f"/tmp/smartarray-agent-{os.geteuid()}")
    return base / "smartarray-agent" / "cli.lock"


class HostLock:
    def __init__(self, path: Path, wait_s: float) -> None:
        self.path = Path(path)
        self.wait_path = self.path.with_name(self.path.name + ".wait")
        self.wait_s = wait_s
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        self.path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            with self._announced():
                self._wait_for(fd)
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def others_waiting(self) -> bool:
        """True when another process is waiting for this lock."""
        try:
            fd = os.open(self.wait_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops our probe lock too
        return False

    def holder(self) -> int | None:
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    def _wait_for(self, fd: int) -> None:
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(self.path, self.wait_s, self.holder()) from None
                time.sleep(POLL_S)

    @contextlib.contextmanager
    def _announced(self):
        try:
            fd = os.open(self.wait_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            yield  # no announcement possible (read-only dir): plain waiting still works
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def __enter__(self) -> HostLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
