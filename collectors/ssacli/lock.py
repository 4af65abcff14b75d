"""One lock for every vendor CLI call on the host, the daemon's and the operator's alike: an
exclusive ``flock`` on one file, which the kernel frees when its holder dies (the vendor CLI
refuses to run twice at once).

The lock file and its ``.wait`` companion are their owner's (root, for the system path):
created 0600 whatever the umask (an older file's mode forced), never through a symbolic
link, refused when another user owns them or others may write to their directory without
its sticky bit. A user who cannot open them can neither take the lock nor make it yield.

The holder writes who it is into the lock file (one JSON line: pid, what it is doing, since
when, and the vendor CLI process it runs), so that a waiter can say whom it waits for. A
holder that lets go empties the file; one that was killed leaves its line, and with it a
vendor CLI that may have outlived it, holding the vendor's single-instance lock: the next
holder finds that CLI by its pid and start time, ends it and says so.

Waiting is fair: a waiter announces itself with a shared lock on ``<lock>.wait``, and a
process that held the lock before does not take it again while someone waits, so that an
operator's command runs before the daemon's next round even when rounds are back to back.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
import time
from collections.abc import Callable
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


class LockError(SsacliError):
    """The host lock could not be taken."""


class LockRefused(LockError):
    """A lock file or its directory is not safe to use (another user's, a link, writable by
    others): using it would let that user take or block the lock."""


class LockTimeout(LockError):
    def __init__(self, path: Path, wait_s: float, who: str) -> None:
        super().__init__(f"the host lock {path} is held by {who}; gave up after {wait_s:g} s")


def default_lock_path() -> Path:
    """``DEFAULT_SYSTEM_PATH`` for root; else a per-user runtime directory, where only the
    simulator can be run anyway."""
    if os.geteuid() == 0:
        return DEFAULT_SYSTEM_PATH
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(f"/tmp/smartarray-agent-{os.geteuid()}")
    return base / "smartarray-agent" / "cli.lock"


def _to_stderr(message: str) -> None:
    print(f"smartarray-agent: {message}", file=sys.stderr, flush=True)


def _this_process() -> str:
    words = " ".join(" ".join(sys.orig_argv).split())  # one line
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

    def acquire(self) -> None:
        """Take the lock, waiting up to ``wait_s``. Raises LockTimeout or LockRefused."""
        if self._fd is not None:
            return
        deadline = time.monotonic() + self.wait_s
        self._check_directory()
        fd = _open_owned(self.path)
        self.waiting = True
        try:
            while self._held_before and self.others_waiting() and time.monotonic() < deadline:
                time.sleep(POLL_S)
            announced = _open_owned(self.wait_path)
            try:
                fcntl.flock(announced, fcntl.LOCK_SH)  # others_waiting sees it
                self._wait_for(fd, deadline)
            finally:
                os.close(announced)
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
        """End the vendor CLI a killed holder left running."""
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
        """Whether another process that may take this lock waits for it (a ``.wait`` file
        that is not ours, or not safe, counts for nobody)."""
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
        if (holder := self.holder()) is None:
            return "another process"
        return f"pid {holder.pid} ({holder.doing}, for {max(0, time.time() - holder.since):.0f} s)"

    def _wait_for(self, fd: int, deadline: float) -> None:
        """Take the lock on ``fd`` by ``deadline``, telling whom it waits for after
        ``NOTICE_AFTER_S``; LockTimeout names them."""
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

    def _check_directory(self) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = distrust(directory.lstat(), kind="directory", owners=(0, os.geteuid()),
                         sticky_ok=True)
        if found is not None:
            why = {"owner": f"belongs to uid {found.uid}, neither root nor uid {os.geteuid()}",
                   "mode": f"has mode {found.mode:o}: others may write to it"}.get(
                       found.what, "is not a directory")
            raise LockRefused(f"the host lock's directory {directory} {why}: refusing to use "
                              f"{self.path}")


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
    """When process ``pid`` started; None when it is no more (a zombie has ended)."""
    found = process(pid)
    return None if found is None or found.state == "Z" else found.started
