"""End to end with a real Prometheus: Debian's ``prometheus`` on loopback scrapes
``smartarray-agent run`` on the simulator, with packaging/prometheus/alerts.yml loaded as
shipped. The simulated battery is switched to failed (the scenario file is swapped for the
failed-battery one) and SmartArrayBackupPowerFailed must go pending, then firing, through
Prometheus' HTTP API. Then the agent is killed: SmartArrayAgentDown must fire while the battery
alert keeps firing. The dashboards' queries run against the same Prometheus.

About 100 s: the battery alert's `for: 1m` is kept as shipped; SmartArrayAgentDown's `for: 5m`
is shortened to 5s in the copy of the rules Prometheus loads, its expression kept as shipped."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from smartarray_agent.simulator import BUNDLED

from .agent_process import AgentProcess
from .test_packaging_dashboard import all_queries, concrete, queries

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "packaging" / "prometheus" / "alerts.yml"
PROMETHEUS = shutil.which("prometheus")

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    PROMETHEUS is None, reason="the prometheus binary is not installed (apt-get install prometheus)"
)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(what: str, predicate, timeout_s: float, process: subprocess.Popen,
               log: Path):
    """Ask ``predicate`` (a server's HTTP API) until it answers something true; fail with the
    end of the server's log if it does not within ``timeout_s`` or the server exits."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline and process.poll() is None:
        try:
            last = predicate()
        except OSError:  # not listening yet
            last = None
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what}: not seen in {timeout_s} s (last: {last})\n"
                         + log.read_text()[-3000:])


def rules_for_the_test(directory: Path) -> Path:
    """alerts.yml as shipped, but SmartArrayAgentDown waits 5s instead of 5 minutes."""
    text = ALERTS.read_text(encoding="utf-8")
    shortened = re.sub(r'(expr: up\{job="smartarray"\} == 0\n\s+for: )5m', r"\g<1>5s", text)
    assert shortened != text, "SmartArrayAgentDown's `for: 5m` not found"
    path = directory / "alerts.yml"
    path.write_text(shortened, encoding="utf-8")
    return path


class Prometheus:
    def __init__(self, directory: Path, target: str) -> None:
        self.directory = directory
        self.port = free_port()
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(rules_for_the_test(directory))],
            "scrape_configs": [{"job_name": "smartarray",
                                "static_configs": [{"targets": [target]}]}],
        }
        (directory / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        self.log = (directory / "prometheus.log").open("w")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={directory / 'prometheus.yml'}",
             f"--storage.tsdb.path={directory / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            cwd=directory,
        )

    def api(self, path: str, **params: str) -> dict:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def wait(self, what: str, predicate, timeout_s: float):
        return wait_until(what, predicate, timeout_s, self.process,
                          self.directory / "prometheus.log")

    def now(self) -> float:
        """Prometheus' clock."""
        return float(self.api("query", query="time()")["result"][1])

    def evaluated_after(self, moment: float) -> bool:
        """Every rule group has been evaluated since ``moment`` (Prometheus' clock)."""
        groups = self.api("rules")["groups"]
        return bool(groups) and all(_epoch(g["lastEvaluation"]) > moment for g in groups)

    def alerts(self, name: str) -> list[dict]:
        return [a for a in self.api("alerts")["alerts"] if a["labels"]["alertname"] == name]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def _epoch(rfc3339: str) -> float:
    """``2026-11-22T18:40:01.123456789Z`` -> Unix time (the nanoseconds cut to microseconds)."""
    trimmed = re.sub(r"(\.\d{6})\d*", r"\1", rfc3339).replace("Z", "+00:00")
    return datetime.fromisoformat(trimmed).timestamp()


@pytest.fixture
def stack(tmp_path):
    scenario = tmp_path / "scenario.toml"
    scenario.write_bytes((BUNDLED / "gen9-battery.toml").read_bytes())
    agent = AgentProcess(tmp_path, f"""
[ssacli]
simulate = "{scenario}"
lock_file = "{tmp_path / 'cli.lock'}"

[collect]
interval_s = 1.0

[sysfs]
enabled = false
""").start()
    prometheus = Prometheus(tmp_path, agent.host)
    try:
        yield agent, prometheus, scenario
    finally:
        prometheus.stop()
        agent.kill()


def test_a_failed_battery_fires_the_alert_through_prometheus(stack):
    agent, prometheus, scenario = stack
    started = time.monotonic()
    prometheus.wait("the agent scraped as up", lambda: [
        r for r in prometheus.api("query", query='up{job="smartarray"} == 1')["result"]
    ], 60)
    healthy = prometheus.wait("backup power OK in Prometheus", lambda: prometheus.api(
        "query", query='smartarray_backup_power_status{state="ok",controller="0"} == 1'
    )["result"], 30)
    instance = healthy[0]["metric"]["instance"]
    rules = prometheus.api("rules")["groups"]
    assert sum(len(group["rules"]) for group in rules) == sum(
        len(group["rules"]) for group in yaml.safe_load(ALERTS.read_text())["groups"])
    healthy_at = prometheus.now()
    prometheus.wait("two rule evaluations of the healthy state", lambda: (
        prometheus.evaluated_after(healthy_at + 1.0)), 30)
    assert prometheus.alerts("SmartArrayBackupPowerFailed") == []
    assert prometheus.alerts("SmartArrayCollectorFailing") == []

    # Both dashboards' queries run against this Prometheus (variables set as Grafana would).
    for expr in all_queries().values():
        query = concrete(expr).replace("db1:9712", instance)
        prometheus.api("query", query=query)  # asserts status "success"
    for where in ("Backup power/A", "Cache status/A", "Cache ratio/A", "Write cache active/A",
                  "Unprotected write cache/A", "Collector success/A", "$controller"):
        query = concrete(queries()[where]).replace("db1:9712", instance)
        assert prometheus.api("query", query=query)["result"], f"{where} shows no data"
    fleet = {where: expr for where, expr in all_queries().items() if where.startswith("fleet:")}
    for where in ("fleet:Backup power failed/A", "fleet:Agents down/A",
                  "fleet:Vendor CLI versions/A", "fleet:Controller models and firmware/A"):
        assert prometheus.api("query", query=concrete(fleet[where]))["result"], where

    # The battery fails.
    swap = scenario.with_suffix(".new")
    swap.write_bytes((BUNDLED / "failed-battery.toml").read_bytes())
    swap.replace(scenario)
    failed_at = time.monotonic()
    pending = prometheus.wait("SmartArrayBackupPowerFailed pending", lambda: [
        a for a in prometheus.alerts("SmartArrayBackupPowerFailed") if a["state"] == "pending"
    ], 30)
    assert pending[0]["labels"]["controller"] == "0"
    firing = prometheus.wait("SmartArrayBackupPowerFailed firing", lambda: [
        a for a in prometheus.alerts("SmartArrayBackupPowerFailed") if a["state"] == "firing"
    ], 120)
    waited = time.monotonic() - failed_at
    alert = firing[0]
    assert alert["labels"] == {
        "alertname": "SmartArrayBackupPowerFailed", "severity": "warning",
        "instance": instance, "job": "smartarray", "controller": "0", "state": "failed",
    }
    assert alert["annotations"]["summary"] == (
        f"Smart Array cache backup power failed on {instance}, controller 0")
    assert "ssacli ctrl slot=0 show detail" in alert["annotations"]["description"]
    assert waited >= 60, "fired before its `for: 1m`"
    # No write cache is forced on: the data is not at risk, so the critical alert stays quiet.
    assert prometheus.alerts("SmartArrayUnprotectedWriteCache") == []

    # The agent dies: the agent-down alert fires, and the battery alert does not resolve.
    agent.kill()
    killed_at = time.monotonic()
    down = prometheus.wait("SmartArrayAgentDown firing", lambda: [
        a for a in prometheus.alerts("SmartArrayAgentDown") if a["state"] == "firing"
    ], 60)
    assert down[0]["labels"]["instance"] == instance
    assert prometheus.api("query", query=f'up{{instance="{instance}"}}')["result"][0]["value"][
        1] == "0"
    after_kill = prometheus.now()
    prometheus.wait("the rules evaluated with the agent gone", lambda: (
        prometheus.evaluated_after(after_kill + 1.0)), 30)
    still = [a for a in prometheus.alerts("SmartArrayBackupPowerFailed") if a["state"] == "firing"]
    assert [a["labels"]["instance"] for a in still] == [instance]
    print(f"firing {waited:.0f} s after the battery failed; agent down firing "
          f"{time.monotonic() - killed_at:.0f} s after the kill; test took "
          f"{time.monotonic() - started:.0f} s")
