"""packaging/prometheus/alerts.yml: promtool accepts it and its unit tests pass, every alert the
issue asks for is there with on-call text, every alert is tested firing and not firing, and the
rules name only metrics the agent (or node_exporter's textfile collector) exports."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from .test_packaging_promql import (
    AGENT_METRICS,
    NODE_EXPORTER_METRICS,
    PROMTOOL,
    metric_names,
    needs_promtool,
)

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "packaging" / "prometheus" / "alerts.yml"
TESTS = sorted((ROOT / "packaging" / "prometheus" / "tests").glob("*.yml"))

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
}


def rules() -> list[dict]:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in document["groups"] for rule in group["rules"]]


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
    assert "{{ $labels.instance }}" in summary, "the summary names the host"
    assert "To do" in description, "the description says what to do"
    assert len(description) > 200
    assert "for" in rule, "a `for:` duration, even 0m, states the intent"


@pytest.mark.parametrize("name", sorted(alerts()))
def test_each_alert_names_only_exported_metrics(name):
    names = metric_names(alerts()[name]["expr"])
    assert names, "an alert on no metric"
    assert names <= AGENT_METRICS | NODE_EXPORTER_METRICS, names - AGENT_METRICS


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


@needs_promtool
def test_promtool_unit_tests_pass():
    assert TESTS
    result = subprocess.run([PROMTOOL, "test", "rules", *map(str, TESTS)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(TESTS)


@needs_promtool
def test_the_unit_tests_fail_when_a_rule_changes(tmp_path):
    """The unit tests pin the rules: an alert that fires one collection early fails them."""
    (tmp_path / "tests").mkdir()
    text = ALERTS.read_text(encoding="utf-8")
    early = text.replace(
        'smartarray_backup_power_status{state="failed"} == 1\n        for: 1m',
        'smartarray_backup_power_status{state="failed"} == 1\n        for: 0m',
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
