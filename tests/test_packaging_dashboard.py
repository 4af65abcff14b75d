"""packaging/grafana/dashboard.json: ready for Grafana's file provisioning (a data source
variable, no ``__inputs``), one row per controller, the panels the issue lists, and every
query parses (promtool) and names only metrics the agent exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_packaging_promql import AGENT_METRICS, metric_names, needs_promtool, promtool_parses

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "packaging" / "grafana" / "dashboard.json"
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
}
REQUIRED_COLLECTOR = {
    "collector success": "smartarray_collector_success",
    "data age": "smartarray_collector_last_success_timestamp_seconds",
}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


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
                            ("$controller", "0")):
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


def test_ready_for_file_provisioning():
    board = dashboard()
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
    assert "${DS_" not in DASHBOARD.read_text(encoding="utf-8"), "an export placeholder is left"


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


def test_panels_do_not_overlap():
    board = dashboard()
    taken: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        cells = {(pos["x"] + dx, pos["y"] + dy) for dx in range(pos["w"]) for dy in range(pos["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
    ids = [panel["id"] for panel in panels(board)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("where", sorted(queries()))
def test_each_query_names_only_exported_metrics(where):
    names = metric_names(queries()[where])
    assert names, f"{where} selects no metric"
    assert names <= AGENT_METRICS, names - AGENT_METRICS


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
    promtool_parses({where: concrete(expr) for where, expr in queries().items()}, tmp_path)
