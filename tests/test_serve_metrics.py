"""``serve`` answers with the daemon's page followed by its own process figures (issue #29
finding 4): a real ``run`` publishing on the simulator and a real ``serve``, scraped over
loopback."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from smartarray_agent.exporter.publish import PLAIN

from .agent_process import AgentProcess, parse_samples, simulated, value
from .promtool import PROMTOOL, check_metrics

_SERVING = re.compile(r"serving \S+ on http://([^/]+)/")


def started_at(pid: int) -> float:
    """When process ``pid`` started, in Unix time, as the kernel counts it."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                if line.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def wait_until(predicate, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.05)


def start_serve(config: Path) -> tuple[subprocess.Popen, str]:
    """``serve`` on a free loopback port; the process and its host:port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
         "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first = process.stderr.readline()
    match = _SERVING.search(first)
    assert match, first + process.stderr.read()
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the pipe drained
    return process, match.group(1)


def test_serve_adds_its_own_process_to_the_daemons_page(tmp_path):
    published = tmp_path / "published"
    published.mkdir(mode=0o750)
    agent = AgentProcess(tmp_path, simulated(tmp_path, "gen9-battery",
                                             f'[web]\npublish_dir = "{published}"\n'))
    agent.process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "run", "--config", str(agent.config_path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=agent.env, cwd=tmp_path)
    serve = None
    try:
        wait_until(lambda: (published / PLAIN).exists()
                   and b'collector="ssacli"} 1' in (published / PLAIN).read_bytes())
        serve, agent.host = start_serve(agent.config_path)
        status, _, page = agent.request()
        assert status == 200
        samples = parse_samples(page.decode())
        # The daemon's own, as it published them, and serve's, under their own names.
        assert value(samples, "process_start_time_seconds") == pytest.approx(
            started_at(agent.process.pid), abs=0.01)
        assert value(samples, "smartarray_serve_process_start_time_seconds") == pytest.approx(
            started_at(serve.pid), abs=0.01)
        assert value(samples, "smartarray_serve_process_open_fds") > 0
        assert value(samples, "smartarray_serve_process_resident_memory_bytes") > 10 * 2**20
        assert b"smartarray_serve_" not in (published / PLAIN).read_bytes()
        if PROMTOOL:  # one family per name, and the lint of the whole page
            check_metrics(page)
        _, headers, zipped = agent.request(headers={"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip"
        assert parse_samples(gzip.decompress(zipped).decode()).keys() == samples.keys()
    finally:
        agent.kill()
        if serve is not None:
            serve.kill()
            serve.wait()
