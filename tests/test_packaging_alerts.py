"""packaging/prometheus/alerts.yml: promtool accepts it and its unit tests pass, every alert the
issue asks for is there with on-call text and a runbook, every alert is tested firing and not
firing, and the rules name only metrics the agent (or node_exporter's textfile collector, or
Prometheus' `up`) exports. The drive states the alerts select are those `check` judges the same
way. packaging/prometheus/alertmanager.yml: amtool accepts it, and a real Alertmanager
inhibits what it should (one page per failed battery) and nothing else."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from smartarray_agent.cli import plugin
from smartarray_agent.common.model import LOGICAL_DRIVE_STATES, PHYSICAL_DRIVE_STATES

from .test_e2e_prometheus import free_port, wait_until
from .test_packaging_promql import (
    AGENT_METRICS,
    NODE_EXPORTER_METRICS,
    PROMETHEUS_METRICS,
    PROMTOOL,
    metric_names,
    needs_promtool,
)

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "packaging" / "prometheus" / "alerts.yml"
TESTS = sorted((ROOT / "packaging" / "prometheus" / "tests").glob("*.yml"))
ALERTMANAGER_CONFIG = ROOT / "packaging" / "prometheus" / "alertmanager.yml"
RUNBOOKS = ROOT / "docs" / "runbooks.md"
# The runbooks in the project's repository: a link that opens on the on-call's phone, not a
# file:// path on the host (issue 28 finding 2; the address is the mixin's sourceRepository).
RUNBOOK_PREFIX = ("https://github.com/smartarray-agent/smartarray-agent/blob/main/"
                  "docs/runbooks.md#")
AMTOOL = shutil.which("amtool")
ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
# Alerts on the whole scrape job, not on one host: their summary cannot name an instance.
JOB_WIDE = {"SmartArrayAgentAbsent"}
# The agent's own health: these read the present, not the last hour.
AGENT_HEALTH = {"SmartArrayAgentDown", "SmartArrayAgentAbsent", "SmartArrayCollectorFailing",
                "SmartArrayCollectorDataStale", "SmartArrayTextfileStale",
                "SmartArrayProbeFailing", "SmartArrayProbeSnapshotStale"}

# The alerts issue 8 lists, by the alert that covers each.
REQUIRED = {
    "backup power failed": "SmartArrayBackupPowerFailed",
    "recharging for longer than a configurable time": "SmartArrayBackupPowerRechargingTooLong",
    "cache disabled": "SmartArrayCacheDisabled",
    "unprotected write cache (critical)": "SmartArrayUnprotectedWriteCache",
    "write cache configured but inactive": "SmartArrayWriteCacheInactive",
    "controller status not ok": "SmartArrayControllerStatusNotOk",
    "logical drive failed": "SmartArrayLogicalDriveFailed",
    "physical drive failed": "SmartArrayPhysicalDriveFailed",
    "controller lockup": "SmartArrayControllerLockup",
    "collector failing": "SmartArrayCollectorFailing",
    "collector data stale": "SmartArrayCollectorDataStale",
    "textfile stale": "SmartArrayTextfileStale",
    # issue 14
    "agent's scrape target down": "SmartArrayAgentDown",
    "agent's scrape job absent": "SmartArrayAgentAbsent",
    "unknown backup power state": "SmartArrayBackupPowerStatusUnknown",
    "unknown cache state": "SmartArrayCacheStatusUnknown",
    "unknown logical drive state": "SmartArrayLogicalDriveStatusUnknown",
    "unknown physical drive state": "SmartArrayPhysicalDriveStatusUnknown",
    # issue 27
    "an iLO the probe job cannot read": "SmartArrayProbeFailing",
    "a probe answered from an old read": "SmartArrayProbeSnapshotStale",
}


@functools.cache
def _alerts_file() -> dict:
    """The rules file, read once by each process of the run (the tests only read it)."""
    return yaml.safe_load(ALERTS.read_text(encoding="utf-8"))


def rules() -> list[dict]:
    return [rule for group in _alerts_file()["groups"] for rule in group["rules"]]


def alerts() -> dict[str, dict]:
    found = {}
    for rule in rules():
        assert "alert" in rule, f"only alerting rules belong here: {rule}"
        assert rule["alert"] not in found, f"{rule['alert']} is defined twice"
        found[rule["alert"]] = rule
    return found


def test_every_alert_of_the_issue_is_there():
    names = alerts()
    missing = {what: name for what, name in REQUIRED.items() if name not in names}
    assert not missing


def test_unprotected_write_cache_is_the_critical_one():
    assert alerts()["SmartArrayUnprotectedWriteCache"]["labels"]["severity"] == "critical"


@pytest.mark.parametrize("name", sorted(alerts()))
def test_each_alert_tells_the_on_call_what_to_do(name):
    rule = alerts()[name]
    assert rule["labels"]["severity"] in {"warning", "critical"}
    summary = rule["annotations"]["summary"]
    description = rule["annotations"]["description"]
    if name not in JOB_WIDE:
        assert "{{ $labels.instance }}" in summary, "the summary names the host"
    assert "To do" in description, "the description says what to do"
    assert len(description) > 200
    assert "for" in rule, "a `for:` duration, even 0m, states the intent"


@pytest.mark.parametrize("name", sorted(alerts()))
def test_each_alert_names_only_exported_metrics(name):
    names = metric_names(alerts()[name]["expr"])
    assert names, "an alert on no metric"
    assert names <= AGENT_METRICS | NODE_EXPORTER_METRICS | PROMETHEUS_METRICS, (
        names - AGENT_METRICS)


def _unit_test_cases() -> dict[str, tuple[int, int]]:
    """alertname -> (evaluations expecting it firing, evaluations expecting it silent)."""
    cases: dict[str, list[int]] = {}
    for path in TESTS:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert document["rule_files"] == ["../alerts.yml"], path
        for test in document["tests"]:
            for check in test.get("alert_rule_test", []):
                counts = cases.setdefault(check["alertname"], [0, 0])
                counts[0 if check.get("exp_alerts") else 1] += 1
    return {name: (firing, silent) for name, (firing, silent) in cases.items()}


def test_each_alert_has_unit_tests_that_see_it_fire_and_stay_silent():
    cases = _unit_test_cases()
    for name in alerts():
        firing, silent = cases.get(name, (0, 0))
        assert firing and silent, f"{name}: {firing} firing and {silent} silent evaluations"
    assert set(cases) <= set(alerts()), "a test names an alert that does not exist"


@needs_promtool
def test_promtool_checks_the_rules():
    result = subprocess.run([PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules())} rules found" in result.stdout


@pytest.mark.e2e  # Prometheus's rule engine over every alert's time series: seconds of CPU
@needs_promtool
def test_promtool_unit_tests_pass():
    assert TESTS
    result = subprocess.run([PROMTOOL, "test", "rules", *map(str, TESTS)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(TESTS)


@pytest.mark.e2e
@needs_promtool
def test_the_unit_tests_fail_when_a_rule_changes(tmp_path):
    """The unit tests pin the rules: an alert that fires one collection early fails them."""
    (tmp_path / "tests").mkdir()
    text = ALERTS.read_text(encoding="utf-8")
    early = text.replace(
        'smartarray_backup_power_status{state="failed"}[1h]) == 1\n        for: 1m',
        'smartarray_backup_power_status{state="failed"}[1h]) == 1\n        for: 0m',
    )
    assert early != text
    (tmp_path / "alerts.yml").write_text(early, encoding="utf-8")
    test = TESTS[[p.name for p in TESTS].index("backup_power.yml")]
    copy = tmp_path / "tests" / test.name
    copy.write_text(test.read_text(encoding="utf-8"), encoding="utf-8")
    result = subprocess.run([PROMTOOL, "test", "rules", str(copy)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0
    assert "SmartArrayBackupPowerFailed, time: 2m" in result.stdout + result.stderr


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the level-2 headings: lower-case, spaces to dashes."""
    return {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
            for h in re.findall(r"^## (.+)$", markdown, re.M)}


@pytest.mark.parametrize("name", sorted(alerts()))
def test_each_alert_links_its_runbook_entry(name):
    url = alerts()[name]["annotations"]["runbook_url"]
    assert url == RUNBOOK_PREFIX + name.lower()
    text = RUNBOOKS.read_text(encoding="utf-8")
    assert name.lower() in _anchors(text)
    entry = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    for part in ("**Means:**", "**Data-loss risk:**", "**Confirm:**", "**Do"):
        assert part in entry, f"{name}: the runbook entry has no {part}"


def test_the_runbooks_cover_exactly_the_alerts_and_name_the_commands():
    text = RUNBOOKS.read_text(encoding="utf-8")
    assert set(re.findall(r"^## (\S+)$", text, re.M)) == set(alerts())
    for command in ("smartarray-agent status", "smartarray-agent check",
                    "smartarray-agent write-cache disable --what no-battery --slot N"):
        assert command in text


def test_only_the_agent_down_rules_name_the_scrape_job():
    """The job selector is in one documented place: the two agent-down rules."""
    naming = {name for name, rule in alerts().items() if 'job="smartarray"' in rule["expr"]}
    assert naming == {"SmartArrayAgentDown", "SmartArrayAgentAbsent"}
    assert 'job="smartarray"' in ALERTS.read_text(encoding="utf-8").split("groups:")[0]


@pytest.mark.parametrize("name", sorted(set(alerts()) - AGENT_HEALTH))
def test_hardware_alerts_read_the_last_hour_so_a_scrape_gap_does_not_resolve_them(name):
    assert re.search(r"\b(last|avg)_over_time\(", alerts()[name]["expr"])


def _selected_states(alertname: str) -> set[str]:
    match = re.search(r'state=~?"([^"]+)"', alerts()[alertname]["expr"])
    assert match, alertname
    return set(match.group(1).split("|"))


def test_check_and_alerts_agree_on_drive_states():
    """Each drive state word: the alert that selects it has the severity of the plugin code
    `check` gives it; ok and progressing words (expanding, erasing, ...) alert nowhere."""
    severity = {plugin.CRITICAL: "critical", plugin.WARNING: "warning"}
    for kind, states in (("Logical", LOGICAL_DRIVE_STATES), ("Physical", PHYSICAL_DRIVE_STATES)):
        prefix = f"SmartArray{kind}Drive"
        selecting: dict[str, list[str]] = {}
        for name in alerts():
            if name.startswith(prefix):
                for word in _selected_states(name):
                    selecting.setdefault(word, []).append(name)
        for word in states:
            code = plugin.drive_code(states, word)
            names = selecting.get(word, [])
            if code == plugin.OK:
                assert not names, f"{word} is fine for check but alerts in {names}"
            else:
                assert len(names) == 1, f"{kind} {word}: alerts {names}"
                got = alerts()[names[0]]["labels"]["severity"]
                assert got == severity[code], f"{kind} {word}: check {code}, alert {got}"
        assert set(selecting) - set(states) == {"other"}, "an alert selects an unknown word"
        unknown = selecting["other"]
        assert plugin.drive_code(states, "cable_error") == plugin.WARNING
        assert [alerts()[n]["labels"]["severity"] for n in unknown] == ["warning"]


def test_every_unknown_state_alerts_as_a_warning():
    for prefix in ("smartarray_backup_power_status", "smartarray_cache_status",
                   "smartarray_logical_drive_status", "smartarray_physical_drive_status",
                   "smartarray_controller_status"):
        found = [name for name, rule in alerts().items()
                 if prefix + "{" in rule["expr"] and "other" in _selected_states(name)]
        assert found, f"no alert on {prefix}{{state=\"other\"}}"


@pytest.mark.skipif(AMTOOL is None, reason="amtool is not installed "
                    "(apt-get install prometheus-alertmanager)")
def test_amtool_checks_the_alertmanager_config():
    result = subprocess.run([AMTOOL, "check-config", str(ALERTMANAGER_CONFIG)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 inhibit rules" in result.stdout


def test_the_inhibit_rules_name_existing_alerts():
    document = yaml.safe_load(ALERTMANAGER_CONFIG.read_text(encoding="utf-8"))
    for rule in document["inhibit_rules"]:
        for matcher in rule["source_matchers"] + rule["target_matchers"]:
            pattern = matcher.split("=~" if "=~" in matcher else "=", 1)[1].strip().strip('"')
            assert any(re.fullmatch(pattern, name) for name in alerts()), matcher
        assert rule["equal"] == ["instance", "controller"]


class _Alertmanager:
    """Debian's prometheus-alertmanager on loopback with the shipped configuration."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.log_path = directory / "alertmanager.log"
        self.log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [ALERTMANAGER, f"--config.file={ALERTMANAGER_CONFIG}",
             f"--storage.path={directory / 'am'}", "--cluster.listen-address=",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
        )

    def call(self, path: str, body: object | None = None) -> object:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/v2/{path}",
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            text = response.read()
        return json.loads(text) if text else None

    def wait_for(self, what: str, predicate, timeout_s: float = 30.0):
        return wait_until(what, predicate, timeout_s, self.process, self.log_path)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(20)
        self.log.close()


def _alert(name: str, instance: str, controller: str) -> dict:
    return {"labels": {"alertname": name, "instance": instance, "job": "smartarray",
                       "controller": controller, "severity": "warning"}}


@pytest.mark.skipif(ALERTMANAGER is None, reason="prometheus-alertmanager is not installed")
def test_a_failed_battery_pages_once_through_a_real_alertmanager(tmp_path):
    manager = _Alertmanager(tmp_path)
    try:
        manager.wait_for("Alertmanager ready", lambda: manager.call("status"))
        sent = [
            # db1 controller 0: the battery failed; the cache reacts
            _alert("SmartArrayBackupPowerFailed", "db1:9712", "0"),
            _alert("SmartArrayCacheDisabled", "db1:9712", "0"),
            _alert("SmartArrayWriteCacheInactive", "db1:9712", "0"),
            # db1 controller 1 and db2: the same symptoms with no known cause still page
            _alert("SmartArrayWriteCacheInactive", "db1:9712", "1"),
            _alert("SmartArrayCacheDisabled", "db2:9712", "0"),
            # db3: write cache forced on over a failed pack - the critical alert is the page
            _alert("SmartArrayUnprotectedWriteCache", "db3:9712", "0"),
            _alert("SmartArrayBackupPowerFailed", "db3:9712", "0"),
            _alert("SmartArrayWriteCacheInactive", "db3:9712", "0"),
        ]
        manager.call("alerts", sent)

        def states() -> dict[tuple[str, str, str], bool] | None:
            alerts_now = manager.call("alerts")
            assert isinstance(alerts_now, list)
            if len(alerts_now) < len(sent):
                return None
            return {(a["labels"]["alertname"], a["labels"]["instance"],
                     a["labels"]["controller"]): bool(a["status"]["inhibitedBy"])
                    for a in alerts_now}

        def settled():
            found = states()
            return found if found and sum(found.values()) >= 4 else None

        inhibited = manager.wait_for("the inhibitions", settled)
        assert inhibited == {
            ("SmartArrayBackupPowerFailed", "db1:9712", "0"): False,
            ("SmartArrayCacheDisabled", "db1:9712", "0"): True,
            ("SmartArrayWriteCacheInactive", "db1:9712", "0"): True,
            ("SmartArrayWriteCacheInactive", "db1:9712", "1"): False,
            ("SmartArrayCacheDisabled", "db2:9712", "0"): False,
            ("SmartArrayUnprotectedWriteCache", "db3:9712", "0"): False,
            ("SmartArrayBackupPowerFailed", "db3:9712", "0"): True,
            ("SmartArrayWriteCacheInactive", "db3:9712", "0"): True,
        }
    finally:
        manager.stop()
