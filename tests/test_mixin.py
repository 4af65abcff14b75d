"""packaging/mixin: the rules, the Alertmanager example and the dashboards in the checkout (and
the role's copy of the rules) are what the mixin generates; a setting changed once reaches every
rule, text and panel that uses it; the runbook links open anywhere (https, the project's one
repository address, the same in pyproject.toml and galaxy.yml)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from .run_once import build_once
from .test_packaging_promql import PROMTOOL, needs_promtool

pytest.importorskip("_jsonnet", reason="jsonnet is not installed (pip install '.[test]')")

ROOT = Path(__file__).resolve().parent.parent
GENERATE = ROOT / "packaging" / "mixin" / "generate.py"
COLLECTION = ROOT / "packaging" / "ansible" / "ansible_collections" / "smartarray" / "agent"
# Each generated file and where the checkout keeps it.
PLACES = {
    "alerts.yml": ["packaging/prometheus/alerts.yml",
                   f"{COLLECTION.relative_to(ROOT)}/roles/smartarray_agent/files/alerts.yml"],
    "alertmanager.yml": ["packaging/prometheus/alertmanager.yml"],
    "dashboard.json": ["packaging/grafana/dashboard.json"],
    "fleet.json": ["packaging/grafana/fleet.json"],
}


def generate(out: Path, config: str | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, str(GENERATE), "--out", str(out)]
    if config is not None:
        (out.parent / "mine.libsonnet").write_text(config, encoding="utf-8")
        args += ["--config", str(out.parent / "mine.libsonnet")]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def rules(path: Path) -> dict[str, dict]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {rule["alert"]: rule for group in document["groups"] for rule in group["rules"]}


def repository() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return pyproject["project"]["urls"]["Repository"]


def test_the_runbook_links_open_from_anywhere():
    """Finding 2 of issue 28: an https link into the project's repository, not a file:// path
    that opens nothing on the on-call's machine; pyproject.toml and galaxy.yml give the same
    address, and the anchor is the heading GitHub renders from docs/runbooks.md."""
    home = repository()
    assert home.startswith("https://")
    galaxy = yaml.safe_load((COLLECTION / "galaxy.yml").read_text(encoding="utf-8"))
    assert galaxy["repository"] == home
    headings = set(re.findall(r"^## (\S+)$", (ROOT / "docs/runbooks.md").read_text(), re.M))
    for name, rule in rules(ROOT / "packaging/prometheus/alerts.yml").items():
        assert rule["annotations"]["runbook_url"] == (
            f"{home}/blob/main/docs/runbooks.md#{name.lower()}")
        assert name in headings
    assert "galaxy[no-repository]" not in (COLLECTION / ".ansible-lint").read_text()


@pytest.fixture(scope="session")
def changed(tmp_path_factory) -> Path:
    """The mixin rendered with every setting changed, once in a run for the tests that read
    it, whichever xdist worker asks first (jsonnet takes seconds of CPU)."""
    return build_once(tmp_path_factory, "mixin-changed", _render_changed)


def _render_changed(folder: Path) -> Path:
    generate(folder / "out", config="""{
      agentJob: 'hpe-raid',
      probeJob: 'hpe-ilo',
      probeFailingMinutes: 30,
      agentAbsentLookback: '3d',
      probeStaleSeconds: 1800,
      runbookURLPattern: 'https://wiki.example.com/runbooks/%s.html',
      backupPowerRechargeHours: 6,
      backupPowerRechargeRatio: 0.8,
      ssdWearLowRatio: 0.15,
      ssdWearCriticalRatio: 0.05,
      staleSeconds: 1800,
      batteryThresholdPercent: 60,
    }""")
    return folder


def test_a_setting_changed_once_reaches_every_rule_and_panel(changed):
    out = changed / "out"
    found = rules(out / "alerts.yml")
    assert {rule["annotations"]["runbook_url"] for rule in found.values()} == {
        f"https://wiki.example.com/runbooks/{name.lower()}.html" for name in found}
    assert found["SmartArrayAgentDown"]["expr"] == 'up{job="hpe-raid"} == 0'
    assert found["SmartArrayAgentAbsent"]["expr"] == (
        'absent(up{job="hpe-raid"}) and on() (present_over_time(up{job="hpe-raid"}[3d])'
        ' or absent(up{job="hpe-ilo"}))')
    assert "resolves 3d after" in found["SmartArrayAgentAbsent"]["annotations"]["description"]
    probe = found["SmartArrayProbeFailing"]
    assert probe["expr"] == ('smartarray_probe_success{job="hpe-ilo"} == 0 '
                             'or up{job="hpe-ilo"} == 0')
    assert probe["for"] == "30m" and "For 30 minutes" in probe["annotations"]["description"]
    assert "(job hpe-raid)" in found["SmartArrayAgentAbsent"]["annotations"]["summary"]
    stale = found["SmartArrayProbeSnapshotStale"]
    assert 'smartarray_probe_snapshot_age_seconds{job="hpe-ilo"} > 1800\n' in stale["expr"]
    assert "older than 30m 0s is stale" in stale["annotations"]["description"]
    recharge = found["SmartArrayBackupPowerRechargingTooLong"]
    assert "[6h]) > 0.8\n" in recharge["expr"] and "offset 6h)" in recharge["expr"]
    assert "more than 80% of the last 6 hours" in recharge["annotations"]["description"]
    assert "< 0.15 and" in found["SmartArraySsdWearLow"]["expr"]
    assert ">= 0.05" in found["SmartArraySsdWearLow"]["expr"]
    assert found["SmartArraySsdWearCritical"]["expr"].endswith("< 0.05")
    assert found["SmartArraySsdWearOutPredicted"]["expr"].endswith(">= 0.15")
    assert found["SmartArrayCollectorDataStale"]["expr"].endswith("> 1800")
    assert found["SmartArrayTextfileStale"]["expr"].endswith("> 1800")

    fleet = json.loads((out / "fleet.json").read_text(encoding="utf-8"))
    job = next(v for v in fleet["templating"]["list"] if v["name"] == "job")
    assert job["query"] == job["current"]["value"] == "hpe-raid"
    host = (out / "dashboard.json").read_text(encoding="utf-8")
    assert "Below 60 % the write-cache interlock" in host
    steps = [step["value"] for panel in json.loads(host)["panels"]
             for inner in [panel, *panel.get("panels", [])]
             if inner["title"] in ("Backup power charge", "Data age")
             for step in inner["fieldConfig"]["defaults"]["thresholds"]["steps"]]
    assert steps == [None, 0.6, 0.95, None, 300, 1800]


@needs_promtool
def test_promtool_accepts_the_rules_of_a_changed_config(changed):
    result = subprocess.run([str(PROMTOOL), "check", "rules", str(changed / "out" / "alerts.yml")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_checkouts_files_are_what_the_mixin_generates_outside_a_checkout_too(tmp_path):
    """The mixin copied as a package installs it: without a checkout around it, it asks where
    to write; told, it writes what the checkout keeps (one render for both: jsonnet takes
    seconds of CPU)."""
    copy = tmp_path / "usr/share/smartarray-agent/mixin"
    copy.mkdir(parents=True)
    for source in (ROOT / "packaging/mixin").rglob("*"):
        if source.is_file() and "__pycache__" not in source.parts:
            target = copy / source.relative_to(ROOT / "packaging/mixin")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    refused = subprocess.run([sys.executable, str(copy / "generate.py")], capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and "--out" in refused.stderr
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(copy / "generate.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(PLACES)
    stale = [place for name, places in PLACES.items() for place in places
             if (ROOT / place).read_bytes() != (out / name).read_bytes()]
    assert not stale, f"run python3 packaging/mixin/generate.py: {stale} are out of date"
