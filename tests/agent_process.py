"""Run the daemon of ``smartarray-agent run`` on the simulator, as a real process or in this
one, and scrape it over HTTP."""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families

from smartarray_agent.config import Overrides
from smartarray_agent.daemon.agent import Agent
from smartarray_agent.daemon.notify import Notifier
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
            f"[sysfs]\nenabled = false\nudev_debounce_s = 0\n{extra}")


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


class Served:
    """What a test reads from an agent's endpoint, once it listens at ``scheme://host``."""

    scheme = "http"
    host = ""
    lines: list[str]

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


class AgentProcess(Served):
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
        self.lines = []

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


class AgentInProcess(Served):
    """The daemon of ``smartarray-agent run`` (daemon/agent.py's ``Agent``) in this process,
    with ``config`` as its file in ``directory``, for a test whose subject is what it collects
    and serves rather than the process (issue #49): no interpreter to start, and its rounds
    asked for (:meth:`collect`) rather than waited for on a clock. Its log records are kept
    in ``lines``; its signal handlers are the process's while it runs, put back by :meth:`stop`
    (a test of the signals themselves runs :class:`AgentProcess`). As there, the simulator's
    state is kept in ``directory`` (``env``)."""

    def __init__(self, directory: Path, config: str) -> None:
        self.config_path = directory / "agent.toml"
        self.config_path.write_text(config, encoding="utf-8")
        self.env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(directory / "sim-state")}
        self.lines = []
        self._handler = _Kept(self.lines)
        self.agent: Agent | None = None

    def start(self) -> AgentInProcess:
        root = logging.getLogger()
        self._level = root.level
        root.addHandler(self._handler)
        root.setLevel(logging.DEBUG)
        self._environ = os.environ.copy()
        os.environ.update(self.env)
        try:
            self.agent = Agent(self.config_path, Overrides(listen_address="127.0.0.1:0"),
                               Notifier(None))
            self.agent.start()
        except BaseException:
            self.stop()
            raise
        assert self.agent.server is not None
        url = urlsplit(self.agent.server.url)
        self.scheme, self.host = url.scheme, url.netloc
        return self

    def collect(self, timeout_s: float = 60.0) -> None:
        """Ask for a round of collection now, as udev does, and wait until it is served."""
        assert self.agent is not None
        loop = self.agent.loop
        done = loop.rounds + 1
        loop.poke()
        deadline = time.monotonic() + timeout_s
        while loop.rounds < done:
            assert time.monotonic() < deadline, f"no round in {timeout_s} s:\n{self.logs}"
            time.sleep(0.02)

    def reload(self) -> None:
        """What SIGHUP does."""
        assert self.agent is not None
        self.agent.reload()

    def stop(self) -> None:
        """What SIGTERM does: the collections and the endpoint end, the signal handling
        and the logging are the test's again."""
        try:
            if self.agent is not None:
                self.agent.stop()
                self.agent = None
        finally:
            root = logging.getLogger()
            root.removeHandler(self._handler)
            root.setLevel(self._level)
            os.environ.clear()
            os.environ.update(self._environ)


class _Kept(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self._lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self._lines.extend(self.format(record).splitlines())


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
