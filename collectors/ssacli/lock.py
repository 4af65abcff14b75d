"""One lock for every vendor CLI call on the host: the daemon's and the operator's alike.

The vendor CLI refuses to run twice at once (``Error: Another instance of ACU is already
running``), so every caller takes an exclusive ``flock`` on one file first. The kernel frees
the lock when its holder dies, so a crashed holder never blocks the host.

The lock belongs to its owner (root, for the system path): the lock file and its ``.wait``
companion are created 0600 whatever the umask (an older file's mode is forced to 0600),
never through a symbolic link, and refused when another user owns them or when others may
write to their directory without its sticky bit. ``flock`` needs only an open file, so a
user who cannot open the files can neither take the lock nor make its holder yield.

The holder writes who it is into the lock file (one JSON line: pid, what it is doing, since
when, and the vendor CLI process it runs), so a waiter can say whom it waits for: on stderr
after :data:`NOTICE_AFTER_S`, and in :class:`LockTimeout`. A holder that lets go empties the
file; one that was killed (SIGKILL, outside systemd's cgroup) leaves its line, and with it
the vendor CLI it had started, which outlives it and keeps the vendor's single-instance
lock. The next holder finds that CLI by its pid and start time and ends it, and says so.

Waiting is fair: a waiter announces itself with a shared lock on ``<lock>.wait``. A process
that held the lock before does not take it again while someone waits, so an operator's
command runs before the daemon's next round even when rounds are back to back; a holder
that keeps the lock between calls (the opt-in console) checks :meth:`HostLock.others_waiting`
and lets go.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, ValidationError

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.collectors.ssacli.processes import end_groups, process
from smartarray_agent.common.trust import distrust

POLL_S = 0.05
NOTICE_AFTER_S = 1.0
DEFAULT_SYSTEM_PATH = Path("/run/smartarray-agent/cli.lock")
_RECORD_MAX = 4096


class Holder(BaseModel):
    """Who holds the lock, as its holder wrote it into the lock file (one JSON line)."""

    pid: int
    doing: str
    since: float  # epoch seconds
    cli_pid: int | None = None  # the vendor CLI process it runs now
    cli_started: int | None = None  # that process's start time (/proc stat), against reuse

    def describe(self) -> str:
        held = max(0.0, time.time() - self.since)
        return f"pid {self.pid} ({self.doing}, for {held:.0f} s)"


class LockError(SsacliError):
    """The host lock could not be taken."""


class LockRefused(LockError):
    """A lock file or its directory is not safe to use (another user's, a link, writable by
    others): using it would let that user take or block the lock."""


class LockTimeout(LockError):
    def __init__(self, path: Path, wait_s: float, who: str) -> None:
        super().__init__(f"the host lock {path} is held by {who}; gave up after {wait_s:g} s")


def default_lock_path() -> Path:
    """``/run/smartarray-agent/cli.lock`` for root (the daemon, the operator's CLI); a
    per-user runtime directory otherwise, where only the simulator can be run anyway."""
    if os.geteuid() == 0:
        return DEFAULT_SYSTEM_PATH
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(f"/tmp/smartarray-agent-{os.geteuid()}")
    return base / "smartarray-agent" / "cli.lock"


def _to_stderr(message: str) -> None:
    print(f"smartarray-agent: {message}", file=sys.stderr, flush=True)


def _this_process() -> str:
    words = " ".join(" ".join(getattr(sys, "orig_argv", sys.argv)).split())  # one line
    return words if len(words) <= 120 else words[:117] + "..."


class HostLock:
    def __init__(
        self, path: Path, wait_s: float, *, notice: Callable[[str], None] = _to_stderr
    ) -> None:
        self.path = Path(path)
        self.wait_path = self.path.with_name(self.path.name + ".wait")
        self.wait_s = wait_s
        self._notice = notice
        self._fd: int | None = None
        self._held_before = False
        self._since = 0.0
        self.waiting = False  # in acquire(), waiting for the lock (what a timeout reports)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, waiting up to ``wait_s``. Raises LockTimeout or LockRefused."""
        if self._fd is not None:
            return
        deadline = time.monotonic() + self.wait_s
        self._check_directory()
        fd = _open_owned(self.path)
        self.waiting = True
        try:
            if self._held_before:
                self._yield_to_waiters(deadline)
            with self._announced():
                self._wait_for(fd, deadline)
        except BaseException:
            os.close(fd)
            raise
        finally:
            self.waiting = False
        self._fd, self._held_before, self._since = fd, True, time.time()
        self._end_leftover(_read_holder(os.pread(fd, _RECORD_MAX, 0)))
        self.note("")

    def note(self, doing: str, cli_pid: int | None = None) -> None:
        """Record what the holder is doing now (``doing``: a vendor command, or nothing) and
        the vendor CLI process that does it (``cli_pid``), if one runs."""
        if self._fd is None:
            return
        what = f"{_this_process()}: {doing}" if doing else _this_process()
        entry = Holder(pid=os.getpid(), doing=what, since=self._since, cli_pid=cli_pid,
                       cli_started=None if cli_pid is None else process_start(cli_pid))
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, (entry.model_dump_json(exclude_none=True) + "\n").encode(), 0)

    def _end_leftover(self, previous: Holder | None) -> None:
        """End the vendor CLI a killed holder left running (its line is still in the file:
        a holder that lets go empties it)."""
        if previous is None or previous.cli_pid is None or previous.pid == os.getpid():
            return
        started = process_start(previous.cli_pid)
        if started is None or started != previous.cli_started:
            return  # ended since, or its pid now names another process
        self._notice(f"ending the vendor CLI (pid {previous.cli_pid}) that pid {previous.pid} "
                     f"left running when it was killed ({previous.doing}): it would hold "
                     "the vendor's single-instance lock")
        end_groups([previous.cli_pid])

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def others_waiting(self) -> bool:
        """True when another process that may take this lock is waiting for it. A ``.wait``
        file that is not ours (or not safe) counts for nobody."""
        try:
            fd = _open_owned(self.wait_path)
        except (OSError, LockRefused):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops our probe lock too
        return False

    def holder(self) -> Holder | None:
        """Who holds the lock, when the lock file says it and we may read it."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            return _read_holder(os.pread(fd, _RECORD_MAX, 0))
        finally:
            os.close(fd)

    def who(self) -> str:
        """The holder in a message's words: ``pid 42 (what it does, for 3 s)``."""
        holder = self.holder()
        return holder.describe() if holder else "another process"

    # -- waiting ---------------------------------------------------------------------------
    def _yield_to_waiters(self, deadline: float) -> None:
        while self.others_waiting() and time.monotonic() < deadline:
            time.sleep(POLL_S)

    def _wait_for(self, fd: int, deadline: float) -> None:
        notice_at = time.monotonic() + NOTICE_AFTER_S
        noticed = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                now = time.monotonic()
                if now >= deadline:
                    raise LockTimeout(self.path, self.wait_s, self.who()) from None
                if not noticed and now >= notice_at:
                    noticed = True
                    self._notice(f"waiting for the host lock {self.path}, held by "
                                 f"{self.who()}; giving up after {self.wait_s:g} s")
                time.sleep(POLL_S)

    @contextlib.contextmanager
    def _announced(self) -> Iterator[None]:
        fd = _open_owned(self.wait_path)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def _check_directory(self) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = distrust(directory.lstat(), kind="directory", owners=(0, os.geteuid()),
                         sticky_ok=True)
        if found is None:
            return
        if found.what in ("link", "type"):
            raise LockRefused(f"the host lock's directory {directory} is not a directory")
        if found.what == "owner":
            raise LockRefused(
                f"the host lock's directory {directory} belongs to uid {found.uid}, "
                f"neither root nor uid {os.geteuid()}: refusing to use {self.path}"
            )
        raise LockRefused(
            f"others may write to the host lock's directory {directory} "
            f"(mode {found.mode:o}): refusing to use {self.path}"
        )


def _open_owned(path: Path) -> int:
    """Open (or create) a lock file of ours, 0600 whatever the umask; LockRefused for a link,
    a file that is not a regular file or one another user owns."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        link = os.path.islink(path)
        why = "is a symbolic link" if link else f"cannot be opened: {error.strerror}"
        raise LockRefused(f"the host lock file {path} {why}: refusing it") from None
    try:
        info = os.fstat(fd)
        found = distrust(info, kind="file", owners=(os.geteuid(),), forbidden=0)
        if found is not None and found.what == "owner":
            raise LockRefused(
                f"the host lock file {path} belongs to uid {found.uid}, not to uid "
                f"{os.geteuid()}: refusing it (remove it to let a new one be made)"
            )
        if found is not None:
            raise LockRefused(f"the host lock file {path} is not a regular file: refusing it")
        if stat.S_IMODE(info.st_mode) != 0o600:  # any mode is forced, not refused
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_holder(data: bytes) -> Holder | None:
    try:
        return Holder.model_validate_json(data)
    except ValidationError:
        return None


def process_start(pid: int) -> int | None:
    """When process ``pid`` started; None when there is no such process (or it is a zombie,
    already ended)."""
    found = process(pid)
    return None if found is None or found.state == "Z" else found.started
