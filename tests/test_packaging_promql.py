"""PromQL helpers for the alert rule and dashboard tests: which metrics an expression names,
and whether promtool parses it. Tested here on expressions whose answer is known."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .metric_names import metric_help

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (apt-get install prometheus)"
)

# Every metric the agent exports (their HELP texts, which docs/metrics.md documents).
AGENT_METRICS = frozenset(metric_help())
# node_exporter's: the textfile collector, for the textfile-mode alert; the disk statistics,
# for the dashboard's write latency per logical drive.
NODE_EXPORTER_METRICS = frozenset({
    "node_textfile_mtime_seconds", "node_textfile_scrape_error",
    "node_disk_write_time_seconds_total", "node_disk_writes_completed_total",
})
# Prometheus' own series of each scrape target, for the agent-down alerts.
PROMETHEUS_METRICS = frozenset({"up"})

_KEYWORDS = frozenset({
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "bool", "offset", "inf", "nan", "atan2",
    # aggregations, which may take their by/without clause before the parenthesis
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile",
})
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_LABEL_LIST = re.compile(
    r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.IGNORECASE
)
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
# `{__name__="a"}`, `{__name__=~"a|b"}`: a selection by name, as Grafana's label_values() takes
_NAME = r"[A-Za-z_:][A-Za-z0-9_:]*"
_NAME_MATCHER = re.compile(rf'__name__\s*=~?\s*"({_NAME}(?:\|{_NAME})*)"')
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_:.])(0x[0-9a-fA-F]+|(\d+(ms|s|m|h|d|w|y))+|\d+(\.\d+)?([eE][+-]?\d+)?)"
)


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects (functions, keywords, labels and literals left
    out), those of a `__name__` matcher too (an alternation of plain names)."""
    names = set()
    for match in _NAME_MATCHER.finditer(expr):
        names.update(match.group(1).split("|"))
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub("{}", text)
    text = _RANGE.sub("", text)
    text = _LABEL_LIST.sub(r"\1", text)
    text = _NUMBER.sub(" ", text)
    for match in _IDENT.finditer(text):
        word = match.group(0)
        rest = text[match.end():].lstrip()
        if word.lower() in _KEYWORDS or rest.startswith("("):
            continue  # a keyword, or a function or aggregation
        names.add(word)
    return names


def promtool_parses(exprs: dict[str, str], tmp_path: Path) -> None:
    """Fail unless promtool parses every expression (each becomes a recording rule of a
    temporary rule file), naming the ones it rejects."""
    assert PROMTOOL is not None
    groups = [{"name": "parse", "rules": [
        {"record": f"check:expr_{i}", "expr": expr} for i, expr in enumerate(exprs.values())
    ]}]
    rules = tmp_path / "parse-rules.yml"
    rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8")
    result = subprocess.run([PROMTOOL, "check", "rules", str(rules)], capture_output=True,
                            text=True, timeout=60)
    if result.returncode != 0:
        # Which ones: check each on its own for a readable failure.
        bad = []
        for where, expr in exprs.items():
            one = tmp_path / "one.yml"
            one.write_text(yaml.safe_dump({"groups": [{"name": "one", "rules": [
                {"record": "check:expr", "expr": expr}]}]}), encoding="utf-8")
            single = subprocess.run([PROMTOOL, "check", "rules", str(one)],
                                    capture_output=True, text=True, timeout=60)
            if single.returncode != 0:
                bad.append(f"{where}: {expr}\n{single.stdout}{single.stderr}")
        raise AssertionError("promtool rejects:\n" + "\n".join(bad or [result.stdout]))


@pytest.mark.parametrize(("expr", "names"), [
    ('smartarray_backup_power_status{state="failed"} == 1', {"smartarray_backup_power_status"}),
    ('smartarray_cache_ratio{op="write"} > 0\nand on (instance, job, controller) '
     "smartarray_write_cache_active == 0",
     {"smartarray_cache_ratio", "smartarray_write_cache_active"}),
    ("time() - smartarray_collector_last_success_timestamp_seconds > 900",
     {"smartarray_collector_last_success_timestamp_seconds"}),
    ('max by (state) (smartarray_cache_status{instance="$instance",controller="0"} == 1)',
     {"smartarray_cache_status"}),
    ('count without (drive) (rate(foo_total{a="b"}[5m] offset 1h)) * on() group_left(x) bar',
     {"foo_total", "bar"}),
    ('node_textfile_mtime_seconds{file=~"(.*/)?smartarray\\\\.prom"} > 1e3',
     {"node_textfile_mtime_seconds"}),
    ("sum(up) by (job) / 2.5", {"up"}),
    ('{__name__=~"smartarray_collector_success|smartarray_probe_success",instance="$instance"}',
     {"smartarray_collector_success", "smartarray_probe_success"}),
    ('count({__name__="up", job="x"})', {"up"}),
])
def test_metric_names_finds_every_selected_metric_and_nothing_else(expr, names):
    assert metric_names(expr) == names


@needs_promtool
def test_promtool_parses_good_expressions_and_names_a_bad_one(tmp_path):
    promtool_parses({"a": "smartarray_cache_ratio > 0", "b": "sum by (x) (y)"}, tmp_path)
    with pytest.raises(AssertionError, match="broken: sum by"):
        promtool_parses({"good": "up", "broken": "sum by (x (y"}, tmp_path)
