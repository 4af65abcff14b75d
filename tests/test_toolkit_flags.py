"""The exporter toolkit's flags (issue 29 finding 3): every Go exporter takes
``--web.listen-address``, ``--web.config.file`` and ``--web.telemetry-path``; ``run`` and
``serve`` take them too, as the equivalents of ``[web] listen_address``, ``config_file`` and
``telemetry_path``. A real ``run`` on the simulator and a real ``serve``, scraped over
loopback."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import time
from pathlib import Path

import bcrypt

from smartarray_agent.exporter.publish import PLAIN

from .agent_cli import agent as run_agent
from .agent_process import AgentProcess, simulated
from .secret_files import write_secret

AUTH = {"Authorization": "Basic " + base64.b64encode(b"prometheus:scrape").decode()}


def web_config(directory: Path) -> Path:
    hashed = bcrypt.hashpw(b"scrape", bcrypt.gensalt(4)).decode()
    return write_secret(directory / "web.yml", f"basic_auth_users:\n  prometheus: {hashed}\n")


def test_run_takes_the_toolkit_flags(tmp_path):
    agent = AgentProcess(tmp_path, simulated(tmp_path, "gen9-battery")).start(options=(
        "--web.listen-address", "127.0.0.1:0", "--web.config.file", str(web_config(tmp_path)),
        "--web.telemetry-path", "/smartarray/metrics"))
    try:
        deadline = time.monotonic() + 30
        while b"smartarray_controller_info{" not in (
                answer := agent.request("/smartarray/metrics", headers=AUTH))[2]:
            assert time.monotonic() < deadline, agent.logs
            time.sleep(0.1)
        assert answer[0] == 200
        assert agent.request("/metrics", headers=AUTH)[0] == 404
        assert agent.request("/smartarray/metrics")[0] == 401  # the web config applies
        assert b'href="smartarray/metrics"' in agent.request("/", headers=AUTH)[2]
    finally:
        agent.stop()


def test_serve_takes_the_toolkit_flags(tmp_path):
    published = tmp_path / "published"
    published.mkdir(mode=0o750)
    (published / PLAIN).write_bytes(b"smartarray_up 1\n")
    config = tmp_path / "agent.toml"
    config.write_text(f'[web]\npublish_dir = "{published}"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "smartarray_agent", "serve", "--config", str(config),
         "--web.listen-address", "127.0.0.1:0", "--web.config.file", str(web_config(tmp_path)),
         "--web.telemetry-path", "/m"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        host = re.search(r"on http://([^/]+)/", first)
        assert host, first
        import http.client

        def get(path: str, headers: dict) -> int:
            connection = http.client.HTTPConnection(host.group(1), timeout=10)
            try:
                connection.request("GET", path, headers=headers)
                return connection.getresponse().status
            finally:
                connection.close()

        assert get("/m", AUTH) == 200
        assert get("/metrics", AUTH) == 404
        assert get("/m", {}) == 401
    finally:
        process.terminate()
        process.wait(10)


def test_a_telemetry_path_must_be_a_path(tmp_path):
    for bad in ("metrics", "/", "/-/healthy", "/a b"):
        done = run_agent("run", "--simulate", "gen9-battery", "--web.telemetry-path", bad)
        assert done.returncode == 2 and "--web.telemetry-path" in done.stderr, (bad, done)
