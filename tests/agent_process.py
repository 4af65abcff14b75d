"""Run ``smartarray-agent run`` as a real process on the simulator, and scrape it over HTTP."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from smartarray_agent.simulator import BUNDLED

_LISTENING = re.compile(r"listening on (https?)://([^/]+)/")

Samples = dict[tuple[str, frozenset], float]


def scenario_file(directory: Path, name: str, faults: dict | None = None) -> Path:
    """A copy of bundled scenario ``name`` in ``directory``, with ``faults`` as its
    ``[faults]`` table. Writing it again changes what the next simulator process does."""
    text = (BUNDLED / f"{name}.toml").read_text(encoding="utf-8")
    if faults:
        text += "\n[faults]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in faults.items())
    path = directory / "scenario.toml"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return path


def simulated(directory: Path, scenario: str, extra: str = "") -> str:
    """An agent configuration on the bundled ``scenario``, with the CLI lock in ``directory``
    and no udev watch; ``extra`` (TOML tables) is appended."""
    return (f'[ssacli]\nsimulate = "{scenario}"\nlock_file = "{directory}/cli.lock"\n'
            f"[sysfs]\nenabled = false\n{extra}")


def parse_samples(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def names(samples: Samples) -> set[str]:
    return {name for name, _ in samples}


class AgentProcess:
    """``smartarray-agent run --config FILE --listen 127.0.0.1:0`` in ``directory``, with the
    simulator's state and the CLI lock kept there too."""

    def __init__(
        self, directory: Path, config: str, *, env: dict | None = None,
        prefix: tuple[str, ...] = (),
    ) -> None:
        """``prefix``: a command the agent runs under, e.g. ``("prlimit", "--nofile=1024")``."""
        self.directory = directory
        self.prefix = prefix
        self.config_path = directory / "agent.toml"
        self.config_path.write_text(config, encoding="utf-8")
        self.env = {
            **os.environ,
            "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim-state"),
            **(env or {}),
        }
        self.process: subprocess.Popen | None = None
        self.lines: list[str] = []
        self.host = ""
        self.scheme = "http"

    def start(self, timeout_s: float = 30.0, *,
              options: tuple[str, ...] = ("--listen", "127.0.0.1:0")) -> AgentProcess:
        """``options``: the listen address, and more of ``run``'s options."""
        self.process = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "smartarray_agent", "run",
             "--config", str(self.config_path), *options, "--log-level", "debug"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=self.env, cwd=self.directory,
        )
        threading.Thread(target=self._read_logs, daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            match = next((m for m in map(_LISTENING.search, list(self.lines)) if m), None)
            if match:
                self.scheme, self.host = match.groups()
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"the agent did not start listening:\n{self.logs}")

    def _read_logs(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    @property
    def logs(self) -> str:
        return "\n".join(self.lines)

    def request(
        self, path: str = "/metrics", *, method: str = "GET", headers: dict | None = None,
        context: ssl.SSLContext | None = None, timeout_s: float = 10.0,
    ) -> tuple[int, dict[str, str], bytes]:
        if self.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, timeout=timeout_s, context=context)
        else:
            conn = http.client.HTTPConnection(self.host, timeout=timeout_s)
        try:
            conn.request(method, path, headers=headers or {})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def samples(self, **kwargs) -> Samples:
        status, _, body = self.request("/metrics", **kwargs)
        assert status == 200, body
        return parse_samples(body.decode())

    def wait_for(self, predicate, timeout_s: float = 30.0, **kwargs) -> Samples:
        """Scrape until ``predicate(samples)`` holds."""
        deadline = time.monotonic() + timeout_s
        while True:
            samples = self.samples(**kwargs)
            if predicate(samples):
                return samples
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met in {timeout_s} s; logs:\n{self.logs}")
            time.sleep(0.1)

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def stop(self, timeout_s: float = 10.0) -> tuple[int, float]:
        """SIGTERM; returns the exit code and how long the stop took."""
        assert self.process is not None
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout_s)
        return code, time.monotonic() - started

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def processes_running(marker: str) -> list[tuple[int, str]]:
    """(pid, command line) of running processes whose command line contains ``marker`` (a
    unique file path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append((int(entry.name), cmdline))
    return found
