"""Privilege separation (issue 17, item 3): ``run`` with ``[web] publish_dir`` listens on
nothing and publishes the exposition; ``serve``, as an unprivileged user with no
capabilities, answers HTTP from it, and says 503 once the agent is gone."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartarray_agent.exporter.publish import PLAIN, PublishedExposition

from .agent_process import AgentProcess, parse_samples, simulated, value

NOBODY = 65534
_SERVING = re.compile(r"serving \S+ on http://([^/]+)/")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A publish directory as systemd-tmpfiles makes it: root's, set-group-ID, its group
    (nogroup here) the serving user's, mode 2750; in /tmp so that nobody can reach it."""
    directory = Path(tempfile.mkdtemp(prefix="smartarray-publish-"))
    os.chown(directory, 0, NOBODY)
    directory.chmod(0o2750)
    yield directory
    shutil.rmtree(directory)


def wait_until(predicate, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.05)


class Serve:
    """``smartarray-agent serve`` as uid/gid 65534 with no capabilities (setpriv)."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all",
             sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
             "--listen", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        assert self.process.stderr is not None
        self.lines: list[str] = []
        for line in self.process.stderr:
            self.lines.append(line)
            if match := _SERVING.search(line):
                self.host = match.group(1)
                break
        else:
            raise AssertionError("serve did not start:\n" + "".join(self.lines))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        self.lines.extend(self.process.stderr)

    def status_field(self, name: str) -> str:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return next(line.split(":", 1)[1].strip() for line in status.splitlines()
                    if line.startswith(f"{name}:"))

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(10)


def _nobody_can_import_the_agent() -> bool:
    """False where this interpreter's environment is out of reach of uid 65534 (a venv under
    a home directory of mode 0700, as root's is)."""
    return subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c", "import smartarray_agent"],
        stdin=subprocess.DEVNULL, capture_output=True, cwd="/").returncode == 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run serve as another user")
def test_run_publishes_and_an_unprivileged_serve_answers(tmp_path, shared_dir):
    if not _nobody_can_import_the_agent():
        pytest.skip(f"uid {NOBODY} cannot read this environment ({sys.prefix}): install it "
                    "where others may read it (.ci/run does) to run serve unprivileged here")
    config = simulated(tmp_path, "gen9-battery", f'[web]\npublish_dir = "{shared_dir}"\n')
    agent = AgentProcess(tmp_path, config)
    # The config as serve sees it, readable by its group (the root agent reads its own).
    serve_config = shared_dir / "serve.toml"
    serve_config.write_text(config)
    os.chown(serve_config, 0, NOBODY)
    serve_config.chmod(0o640)
    agent.process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "run", "--config", str(agent.config_path),
         "--log-level", "debug"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env=agent.env, cwd=tmp_path)
    serve = None
    try:
        wait_until(lambda: b'collector="ssacli"} 1' in _read(shared_dir / PLAIN))
        info = (shared_dir / PLAIN).stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o640, 0, NOBODY)
        assert sorted(p.name for p in shared_dir.iterdir()) == [PLAIN, "serve.toml"]  # no .gz
        assert not any(":" in line.split()[1] and line.split()[3] == "0A"
                       for line in _tcp_sockets(agent.process.pid)), "run listens on TCP"

        serve = Serve(serve_config)
        assert serve.status_field("Uid").split()[0] == str(NOBODY)
        assert serve.status_field("CapEff") == "0000000000000000"
        assert serve.status_field("CapBnd") == "0000000000000000"
        agent.host = serve.host
        samples = agent.samples()
        assert value(samples, "smartarray_backup_power_status", controller="0",
                     state="ok") == 1
        status, headers, zipped = agent.request(headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        assert parse_samples(gzip.decompress(zipped).decode()) == samples

        agent.process.terminate()
        assert agent.process.wait(10) == 0
        assert not (shared_dir / PLAIN).exists()
        status, headers, body = agent.request()
        assert (status, headers["Retry-After"]) == (503, "5")
        assert b"smartarray-agent.service" in body
        assert serve.stop() == 0
        assert "Traceback" not in "".join(serve.lines)
    finally:
        agent.kill()
        if serve is not None and serve.process.poll() is None:
            serve.process.kill()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _tcp_sockets(pid: int) -> list[str]:
    """The TCP sockets in ``pid``'s network namespace that belong to it."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    rows = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            if line.split()[9] in inodes:
                rows.append(line)
    return rows


def test_a_stale_or_missing_publication_is_none(tmp_path):
    now = [1000.0]
    published = PublishedExposition(tmp_path, max_age_s=90, clock=lambda: now[0],
                                    monotonic=lambda: now[0])
    assert published.body() is None
    (tmp_path / PLAIN).write_bytes(b"a 1\n")
    os.utime(tmp_path / PLAIN, (1000, 1000))
    page = published.body()
    assert page is not None and page.startswith(b"a 1\n# HELP smartarray_serve_process_")
    assert gzip.decompress(published.body(True) or b"") == page
    now[0] = 1091
    assert published.body() is None  # the agent stopped touching it: dead or stuck
    os.utime(tmp_path / PLAIN, (1090, 1090))
    assert (published.body() or b"").startswith(b"a 1\n")


def test_a_wall_clock_stepped_back_keeps_no_dead_agent_s_page(tmp_path):
    """The page's age is judged on the monotonic clock from when serve saw the agent write
    or touch it (issue #50 item 3): an hour's step back of the wall clock once kept a dead
    agent's page served for that hour."""
    wall, monotonic = [1000.0], [5000.0]
    published = PublishedExposition(tmp_path, max_age_s=90, clock=lambda: wall[0],
                                    monotonic=lambda: monotonic[0])
    (tmp_path / PLAIN).write_bytes(b"a 1\n")
    os.utime(tmp_path / PLAIN, (1000, 1000))
    assert published.body() is not None
    wall[0], monotonic[0] = 1000 - 3600 + 91, 5091  # stepped back; the agent has stopped
    assert published.body() is None
    os.utime(tmp_path / PLAIN, (wall[0], wall[0]))  # a live agent touches it, stepped or not
    assert published.body() is not None
    first_sight = PublishedExposition(tmp_path, max_age_s=90, clock=lambda: wall[0] - 3600)
    assert first_sight.body() is None  # a page from the future has no age to trust


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give the publish directory away")
def test_serve_under_journald_logs_without_repeating_the_program_name(tmp_path, shared_dir):
    # The journal already names the program (issue #30, finding 5): "<6>serving ...".
    config = tmp_path / "serve.toml"
    config.write_text(f'[web]\npublish_dir = "{shared_dir}"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
         "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "JOURNAL_STREAM": "8:1"})
    assert process.stderr is not None
    try:
        first = process.stderr.readline()
        process.terminate()
        rest = process.stderr.read()
    finally:
        process.kill()
        process.wait()
    assert _SERVING.search(first), first
    for line in [first, *rest.splitlines()]:
        assert line.startswith("<6>") and "smartarray-agent:" not in line, line
    assert "SIGTERM: stopping" in rest


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
def test_serve_never_follows_a_link_or_reads_a_file_another_user_put_there(tmp_path):
    # issue #31, finding 6: a publish directory someone else could write must not make serve
    # answer with what a link points at, or with a file of theirs.
    directory = tmp_path / "publish"
    directory.mkdir(mode=0o750)
    secret = tmp_path / "secret"
    secret.write_text("not metrics\n")
    (directory / PLAIN).symlink_to(secret)
    published = PublishedExposition(directory)
    assert published.body() is None
    (directory / PLAIN).unlink()
    (directory / PLAIN).write_text("smartarray_build_info 1.0\n")
    os.chown(directory / PLAIN, NOBODY, NOBODY)
    assert published.body() is None
    os.chown(directory / PLAIN, 0, 0)
    assert (published.body() or b"").startswith(b"smartarray_build_info 1.0\n")


def test_serve_refuses_a_publish_directory_others_may_write(tmp_path):
    directory = tmp_path / "publish"
    directory.mkdir()
    directory.chmod(0o2770)
    with pytest.raises(PermissionError, match="writable by group"):
        PublishedExposition(directory)
    config = tmp_path / "serve.toml"
    config.write_text(f'[web]\npublish_dir = "{directory}"\n')
    result = subprocess.run([sys.executable, "-m", "smartarray_agent", "serve", "--config",
                             str(config), "--listen", "127.0.0.1:0"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert f"{directory} is writable by group" in result.stderr
