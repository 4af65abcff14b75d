"""End to end with a real Prometheus: Debian's ``prometheus`` on loopback scrapes
``smartarray-agent run`` on the simulator, with packaging/prometheus/alerts.yml loaded as
shipped. The simulated battery is switched to failed (the scenario file is swapped for the
failed-battery one) and SmartArrayBackupPowerFailed must go pending, then firing, through
Prometheus' HTTP API. The dashboard's queries run against the same Prometheus.

About 80 s: the alert's `for: 1m` is kept as shipped."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from smartarray_agent.collectors.simulator import BUNDLED

from .agent_process import AgentProcess
from .test_packaging_dashboard import concrete, queries

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


class Prometheus:
    def __init__(self, directory: Path, target: str) -> None:
        self.directory = directory
        self.port = free_port()
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(ALERTS)],
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
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            try:
                last = predicate()
            except OSError:  # not listening yet
                last = None
            if last:
                return last
            time.sleep(0.5)
        logs = (self.directory / "prometheus.log").read_text()[-3000:]
        raise AssertionError(f"{what}: not seen in {timeout_s} s (last: {last})\n{logs}")

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
    time.sleep(3)  # a few evaluations of the healthy state
    assert prometheus.alerts("SmartArrayBackupPowerFailed") == []
    assert prometheus.alerts("SmartArrayCollectorFailing") == []

    # The dashboard's queries run against this Prometheus (variables set as Grafana would).
    for expr in queries().values():
        query = concrete(expr).replace("db1:9712", instance)
        prometheus.api("query", query=query)  # asserts status "success"
    for where in ("Backup power/A", "Cache status/A", "Cache ratio/A", "Write cache active/A",
                  "Unprotected write cache/A", "Collector success/A", "$controller"):
        query = concrete(queries()[where]).replace("db1:9712", instance)
        assert prometheus.api("query", query=query)["result"], f"{where} shows no data"

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
    print(f"firing {waited:.0f} s after the battery failed; test took "
          f"{time.monotonic() - started:.0f} s")
