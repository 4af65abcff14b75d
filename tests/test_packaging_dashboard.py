"""packaging/grafana/dashboard.json (one host) and fleet.json (every host): ready for
Grafana's file provisioning (a data source variable, no ``__inputs``), one row per controller
on the host dashboard, the panels the issues list, every query parses (promtool) and names only
metrics the agent, node_exporter or Prometheus (``up``) export, the drive states they select
are those of the model's classes, and both survive a round trip through Grafana's dashboard
model (grafana-foundation-sdk)."""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from smartarray_agent.common.model import LOGICAL_DRIVE_STATES, PHYSICAL_DRIVE_STATES
from smartarray_agent.probe.prober import Prober

from .redfish_ilo import ILO5_TREE, Ilo, serve, tree
from .test_packaging_promql import (
    AGENT_METRICS,
    NODE_EXPORTER_METRICS,
    PROMETHEUS_METRICS,
    PROMTOOL,
    metric_names,
    needs_promtool,
    promtool_parses,
)
from .test_probe import endpoint, get, local_page, probe_config

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "packaging" / "grafana" / "dashboard.json"
FLEET = ROOT / "packaging" / "grafana" / "fleet.json"
BOARDS = {"host": DASHBOARD, "fleet": FLEET}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# The issue's per-controller panels, by the metric that shows each.
REQUIRED_IN_ROW = {
    "backup power state": "smartarray_backup_power_status",
    "backup power charge": "smartarray_backup_power_charge_ratio",
    "cache status": "smartarray_cache_status",
    "cache ratio": "smartarray_cache_ratio",
    "write cache active": "smartarray_write_cache_active",
    "unprotected write cache": "smartarray_unprotected_write_cache",
    "logical drive health": "smartarray_logical_drive_status",
    "physical drive health": "smartarray_physical_drive_status",
    "write latency per logical drive": "node_disk_write_time_seconds_total",
    "write cache per logical drive": "smartarray_logical_drive_caching_enabled",
}
REQUIRED_COLLECTOR = {
    "collector success": "smartarray_collector_success",
    "data age": "smartarray_collector_last_success_timestamp_seconds",
}


def dashboard(path: Path = DASHBOARD) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def panels(board: dict | None = None) -> list[dict]:
    """Every panel, rows' nested panels included."""
    found = []
    for panel in (board or dashboard())["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))
    return found


def queries(board: dict | None = None) -> dict[str, str]:
    """``"panel title/refId" -> expr`` for every target, plus the template variables'."""
    found = {}
    for panel in panels(board):
        for target in panel.get("targets", []):
            found[f"{panel['title']}/{target['refId']}"] = target["expr"]
    for variable in (board or dashboard())["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", text)
            assert match, f"variable {variable['name']}: {text}"
            found[f"${variable['name']}"] = match.group(1)
    return found


def concrete(expr: str) -> str:
    """A query with Grafana's variables replaced by values, as Grafana sends it."""
    for variable, value in (("$__rate_interval", "1m"), ("$__interval", "1m"),
                            ("$__range", "1h"), ("$instance", "db1:9712"),
                            ("$controller", "0"), ("$host", "db1"), ("$job", "smartarray"),
                            ("$probe_job", "smartarray-ilo")):
        expr = expr.replace(variable, value)
    assert "$" not in expr, expr
    return expr


def rows(board: dict) -> list[tuple[dict, list[dict]]]:
    """Each row with the panels under it (expanded rows keep them at the top level)."""
    grouped: list[tuple[dict, list[dict]]] = []
    for panel in board["panels"]:
        if panel["type"] == "row":
            grouped.append((panel, list(panel.get("panels", []))))
        else:
            assert grouped, f"panel {panel['title']} above the first row"
            grouped[-1][1].append(panel)
    return grouped


@pytest.mark.parametrize("path", BOARDS.values(), ids=BOARDS.keys())
def test_ready_for_file_provisioning(path):
    board = dashboard(path)
    assert "__inputs" not in board and "__requires" not in board
    assert board["uid"] and board["title"]
    assert board.get("id") is None, "a provisioned dashboard gets its id from Grafana"
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for panel in panels(board):
        if panel["type"] != "row":
            assert panel["datasource"] == DATASOURCE, panel["title"]
            for target in panel["targets"]:
                assert target["datasource"] == DATASOURCE, panel["title"]
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE
    assert "${DS_" not in path.read_text(encoding="utf-8"), "an export placeholder is left"


def test_one_row_per_controller():
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    controller = variables["controller"]
    assert controller["multi"] and controller["includeAll"]
    assert "controller" in controller["definition"]
    repeated = [row for row, _ in rows(board) if row.get("repeat")]
    assert [row["repeat"] for row in repeated] == ["controller"]
    row, children = rows(board)[0]
    assert row is repeated[0]
    assert "$controller" in row["title"]
    assert children
    for panel in children:
        for target in panel["targets"]:
            assert 'controller="$controller"' in target["expr"], panel["title"]
            assert 'instance="$instance"' in target["expr"], panel["title"]


def test_the_issue_panels_are_there():
    board = dashboard()
    (_, in_row), (collector_row, collector_panels) = rows(board)[0], rows(board)[1]
    row_metrics = set().union(*(metric_names(t["expr"]) for p in in_row for t in p["targets"]))
    missing = {what for what, metric in REQUIRED_IN_ROW.items() if metric not in row_metrics}
    assert not missing
    assert not collector_row.get("repeat"), "collector health is per host, not per controller"
    collector_metrics = set().union(
        *(metric_names(t["expr"]) for p in collector_panels for t in p["targets"]))
    missing = {what for what, metric in REQUIRED_COLLECTOR.items()
               if metric not in collector_metrics}
    assert not missing


@pytest.mark.parametrize("path", BOARDS.values(), ids=BOARDS.keys())
def test_panel_titles_are_unique(path):
    """Titles name the queries in these tests (and the panels for the on-call)."""
    titles = [p["title"] for p in panels(dashboard(path))]
    assert len(titles) == len(set(titles))


@pytest.mark.parametrize("path", BOARDS.values(), ids=BOARDS.keys())
def test_panels_do_not_overlap(path):
    board = dashboard(path)
    taken: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        cells = {(pos["x"] + dx, pos["y"] + dy) for dx in range(pos["w"]) for dy in range(pos["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
    ids = [panel["id"] for panel in panels(board)]
    assert len(ids) == len(set(ids))


def all_queries() -> dict[str, str]:
    """``"board:panel/refId" -> expr`` for both dashboards."""
    return {f"{name}:{where}": expr for name, path in BOARDS.items()
            for where, expr in queries(dashboard(path)).items()}


@pytest.mark.parametrize("where", sorted(all_queries()))
def test_each_query_names_only_exported_metrics(where):
    names = metric_names(all_queries()[where])
    assert names, f"{where} selects no metric"
    allowed = AGENT_METRICS | NODE_EXPORTER_METRICS | PROMETHEUS_METRICS
    assert names <= allowed, names - allowed


def test_the_exported_metrics_are_the_documented_ones():
    """docs/metrics.md documents every metric (helper-2's file); the dashboard and the alerts
    are checked against the agent's own list, which must be the documented one."""
    doc = ROOT / "docs" / "metrics.md"
    if not doc.exists():
        pytest.skip("docs/metrics.md is not written yet")
    documented = set(re.findall(r"\bsmartarray_[a-z0-9_]+\b", doc.read_text(encoding="utf-8")))
    assert documented >= AGENT_METRICS, AGENT_METRICS - documented


@needs_promtool
def test_every_query_parses(tmp_path):
    promtool_parses({where: concrete(expr) for where, expr in all_queries().items()}, tmp_path)


def _panel(board: dict, title: str) -> dict:
    return next(p for p in panels(board) if p["title"] == title)


def test_no_empty_charge_gauge_without_an_ilo():
    charge = _panel(dashboard(), "Backup power charge")
    assert charge["type"] == "stat", "an empty gauge says nothing; a stat says why"
    assert "no iLO configured" in charge["fieldConfig"]["defaults"]["noValue"]


def test_write_latency_sits_beside_the_write_cache_of_the_same_drives():
    board = dashboard()
    latency = _panel(board, "Write latency per logical drive (node_exporter)")
    cached = _panel(board, "Write cache per logical drive")
    (expr,) = [t["expr"] for t in latency["targets"]]
    assert "node_disk_write_time_seconds_total" in expr
    assert "node_disk_writes_completed_total" in expr
    assert "on (device)" in expr and "smartarray_logical_drive_info" in expr
    assert latency["fieldConfig"]["defaults"]["unit"] == "s"
    left, right = latency["gridPos"], cached["gridPos"]
    assert left["y"] == right["y"] and left["x"] + left["w"] == right["x"]
    assert "{{logical_drive}}" in latency["targets"][0]["legendFormat"]
    assert "{{logical_drive}}" in cached["targets"][0]["legendFormat"]


# What the issue's fleet overview shows, by a metric (or selection) of its panels.
FLEET_PANELS = {
    "Backup power failed": 'state="failed"',
    "Backup power recharging": 'state="recharging"',
    "Unprotected write cache": "smartarray_unprotected_write_cache",
    "Write cache inactive": "smartarray_write_cache_active == 0",
    "Agents down": 'up{job="$job"} == 0',
    "Drives rebuilding": "smartarray_logical_drive_status",
    "Vendor CLI versions": "smartarray_cli_info",
    "Controller models and firmware": "smartarray_controller_info",
}


def test_the_fleet_overview_has_the_issue_panels():
    board = dashboard(FLEET)
    for title, selection in FLEET_PANELS.items():
        assert selection in " ".join(t["expr"] for t in _panel(board, title)["targets"]), title
    assert not any(p.get("repeat") for p in panels(board))
    assert all("$instance" not in expr for expr in queries(board).values()), "every host"


def _selected(expr: str, metric: str) -> set[str]:
    match = re.search(metric + r'\{state=~"([^"]+)"\}', expr)
    assert match, (metric, expr)
    return set(match.group(1).split("|"))


def _words(states: dict[str, str], *classes: str) -> set[str]:
    return {word for word, kind in states.items() if kind in classes}


def test_the_fleet_overview_agrees_with_check_and_the_alerts_on_drive_states():
    board = dashboard(FLEET)
    rebuilding = " ".join(t["expr"] for t in _panel(board, "Drives rebuilding")["targets"])
    assert _selected(rebuilding, "smartarray_logical_drive_status") == _words(
        LOGICAL_DRIVE_STATES, "rebuilding")
    bad = " ".join(
        t["expr"] for t in _panel(board, "Drives failed, degraded or unknown")["targets"])
    assert _selected(bad, "smartarray_logical_drive_status") == _words(
        LOGICAL_DRIVE_STATES, "degraded", "failed") | {"other"}
    assert _selected(bad, "smartarray_physical_drive_status") == _words(
        PHYSICAL_DRIVE_STATES, "degraded", "failed") | {"other"}


def test_fleet_tables_link_to_the_host_dashboard():
    host_uid = dashboard()["uid"]
    linked = [p for p in panels(dashboard(FLEET))
              if p["type"] == "table" and p["fieldConfig"]["defaults"].get("links")]
    assert len(linked) >= 4
    for panel in linked:
        (link,) = panel["fieldConfig"]["defaults"]["links"]
        assert link["url"].startswith(f"/d/{host_uid}?var-instance=${{__data.fields.instance}}")


# Fields Grafana reads that the schema of grafana-foundation-sdk 10.1 does not carry: the
# query variables' `definition` (the editor's text of the query) and the built-in annotation's
# `builtIn` marker.
_OUTSIDE_THE_SCHEMA = {"definition", "builtIn"}


@pytest.mark.parametrize("path", BOARDS.values(), ids=BOARDS.keys())
def test_the_dashboard_round_trips_through_grafanas_model(path):
    sdk = pytest.importorskip("grafana_foundation_sdk.models.dashboard")
    encoder = pytest.importorskip("grafana_foundation_sdk.cog.encoder")
    board = dashboard(path)
    model = sdk.Dashboard.from_json(board)
    back = json.loads(json.dumps(model, cls=encoder.JSONEncoder))
    lost = _lost(board, back, "")
    assert all(where.rsplit("/", 1)[1] in _OUTSIDE_THE_SCHEMA for where in lost), lost
    assert queries(back) == queries(board)
    assert [(p["id"], p["type"], p["gridPos"]) for p in panels(back)] == [
        (p["id"], p["type"], p["gridPos"]) for p in panels(board)]


def _lost(before: object, after: object, where: str) -> list[str]:
    """Paths present in ``before`` and missing or changed in ``after`` (defaults the model adds
    are not losses)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key, value in before.items():
            if key not in after:
                found.append(f"{where}/{key}")
            else:
                found += _lost(value, after[key], f"{where}/{key}")
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [w for i, (b, a) in enumerate(zip(before, after, strict=True))
                for w in _lost(b, a, f"{where}[{i}]")]
    return [] if before == after else [f"{where} changed"]


# An agent host, a probe host whose iLO answers, one whose iLO does not, one whose prober is
# not scraped (no probe series then), one answered from a read of 2000 s ago, one from a read
# of unknown age: issue 27's fleet, as Prometheus stores it.
_WATCHED_SERIES = [
    ('up{instance="db1:9712",job="smartarray"}', "1"),
    ('up{instance="db2:9712",job="smartarray"}', "0"),
    ('up{instance="ilo-a.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_success{instance="ilo-a.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_snapshot_age_seconds{instance="ilo-a.example.net",job="smartarray-ilo"}',
     "100"),
    ('up{instance="ilo-b.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_success{instance="ilo-b.example.net",job="smartarray-ilo"}', "0"),
    ('smartarray_probe_snapshot_age_seconds{instance="ilo-b.example.net",job="smartarray-ilo"}',
     "2000"),
    ('up{instance="ilo-c.example.net",job="smartarray-ilo"}', "0"),
    ('up{instance="ilo-d.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_success{instance="ilo-d.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_snapshot_age_seconds{instance="ilo-d.example.net",job="smartarray-ilo"}',
     "2000"),
    ('up{instance="ilo-e.example.net",job="smartarray-ilo"}', "1"),
    ('smartarray_probe_success{instance="ilo-e.example.net",job="smartarray-ilo"}', "1"),
    # a host watched neither way: node_exporter's target is not a Smart Array host
    ('up{instance="db3:9100",job="node"}', "1"),
]


@needs_promtool
def test_the_fleet_overview_sets_agent_and_probe_hosts_side_by_side(tmp_path):
    """Each host once, watched by an agent or by a probe, and whether it answers now; the
    counts beside it, probes answered from an old read among them. Run by promtool's PromQL
    engine on the series above, the variables set to the mixin's defaults."""
    board = dashboard(FLEET)
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["probe_job"]["query"] == "smartarray-ilo"

    def expect(title: str, samples: list[tuple[str, float]]) -> dict:
        (target,) = _panel(board, title)["targets"]
        return {"expr": concrete(target["expr"]), "eval_time": "0m",
                "exp_samples": [{"labels": labels, "value": value} for labels, value in samples]}

    agent = 'up{{instance="{}",job="smartarray",watched_by="agent"}}'
    probe = '{}{{instance="{}",job="smartarray-ilo",watched_by="probe"}}'
    tests = {"tests": [{
        "interval": "1m",
        "input_series": [{"series": series, "values": value} for series, value in _WATCHED_SERIES],
        "promql_expr_test": [
            expect("Watched by", [
                (agent.format("db1:9712"), 1), (agent.format("db2:9712"), 0),
                (probe.format("smartarray_probe_success", "ilo-a.example.net"), 1),
                (probe.format("smartarray_probe_success", "ilo-b.example.net"), 0),
                (probe.format("up", "ilo-c.example.net"), 0),
                (probe.format("smartarray_probe_success", "ilo-d.example.net"), 1),
                (probe.format("smartarray_probe_success", "ilo-e.example.net"), 1),
            ]),
            expect("Hosts watched by an agent", [("{}", 2)]),
            expect("Hosts watched by a probe", [("{}", 5)]),
            expect("Probes failing", [("{}", 2)]),
            # ilo-d's and ilo-e's success 1 is an old read's, or one of unknown age; ilo-b's
            # failed read is counted as failing, not stale
            expect("Probes answered from an old read", [("{}", 2)]),
        ],
    }]}
    (tmp_path / "watched.yml").write_text(json.dumps(tests), encoding="utf-8")
    result = subprocess.run([PROMTOOL, "test", "rules", str(tmp_path / "watched.yml")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def _as_input_series(page: str, instance: str, job: str) -> list[dict]:
    """An exposition's samples as promtool's input series of one target: the labels Prometheus
    adds (``instance``, ``job``) and the value held for 10 minutes."""
    found = []
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if not math.isfinite(sample.value):
                continue
            labels = {**sample.labels, "instance": instance, "job": job}
            text = ",".join(f"{key}={json.dumps(value)}" for key, value in sorted(labels.items()))
            found.append({"series": f"{sample.name}{{{text}}}", "values": f"{sample.value!r}x10"})
    return found


def _host_of(board: dict, instance: str) -> str:
    """The host variable's value for ``instance``: its regex applied, as Grafana does."""
    (host,) = [v for v in board["templating"]["list"] if v["name"] == "host"]
    match = re.fullmatch(host["regex"].strip("/"), instance)
    assert match, instance
    return match.group(1)


# The host dashboard's panels that stay empty, by the kind of host: node_exporter's disk
# statistics are not in this test's fleet (and an iLO runs no node_exporter); Drive health
# lists the drives that are not OK, and both hosts' are; the simulated agent has no [redfish]
# table to read the charge from; a probed iLO has no vendor CLI.
_EMPTY_FOR = {
    "agent": {"Write latency per logical drive (node_exporter)", "Drive health",
              "Backup power charge"},
    "probe": {"Write latency per logical drive (node_exporter)", "Drive health",
              "Vendor CLI version"},
}


@needs_promtool
def test_the_host_dashboard_lists_and_shows_agent_and_probed_hosts_alike(tmp_path):
    """Issue 27 item 3: a mixed fleet as Prometheus stores it, an agent's page (the simulator's
    gen10 host) and a probe's page of an iLO 5 (the fake iLO, read through the Prober), under
    the agent job and the probe job. In promtool's PromQL engine, the host list holds both, and
    every panel of either host shows its data, but the ones _EMPTY_FOR says."""
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)) as server:
        status, probed = get(server, f"target={ilo.address}&module=default")
    assert status == 200 and "smartarray_probe_success 1.0" in probed
    hosts = {"agent": ("db1:9712", "smartarray"), "probe": (ilo.address, "smartarray-ilo")}
    pages = {"agent": local_page(tmp_path), "probe": probed}
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}

    def selector(name: str) -> str:
        """The series selector of a variable's label_values()."""
        match = re.fullmatch(r"label_values\((.+),\s*\w+\)", variables[name]["definition"])
        assert match, variables[name]["definition"]
        return match.group(1)

    def seen(expr: str) -> str:
        return f"clamp_max(count({expr}), 1)"

    def shown(exprs: list[str]) -> dict:
        """A check that one of ``exprs`` has data."""
        return {"expr": " or ".join(seen(expr) for expr in exprs), "eval_time": "10m",
                "exp_samples": [{"labels": "{}", "value": 1}]}

    titles = {p["title"] for p in panels(board)}
    checks = [{"expr": f"group by (instance, job) ({selector('instance')})", "eval_time": "10m",
               "exp_samples": [{"labels": f'{{instance="{i}",job="{j}"}}', "value": 1}
                               for i, j in hosts.values()]}]
    for kind, (instance, _) in hosts.items():
        assert _EMPTY_FOR[kind] <= titles
        values = (("$__rate_interval", "5m"), ("$instance", instance), ("$controller", "0"),
                  ("$host", _host_of(board, instance)))
        for panel in panels(board):
            if panel["type"] == "row" or panel["title"] in _EMPTY_FOR[kind]:
                continue
            exprs = [t["expr"] for t in panel["targets"]]
            for variable, value in values:
                exprs = [expr.replace(variable, value) for expr in exprs]
            checks.append(shown(exprs))
        checks += [shown([selector(name).replace("$instance", instance)])
                   for name in ("host", "controller")]
    tests = {"tests": [{
        "interval": "1m",
        "input_series": [series for kind, (instance, job) in hosts.items()
                         for series in _as_input_series(pages[kind], instance, job)],
        "promql_expr_test": checks,
    }]}
    (tmp_path / "host.yml").write_text(json.dumps(tests), encoding="utf-8")
    result = subprocess.run([PROMTOOL, "test", "rules", str(tmp_path / "host.yml")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr
