"""The agent's text format writer against prometheus_client's ``generate_latest``: the same
bytes for every real capture, for hostile label values and HELP texts, and for every kind of
number; and the names it does not escape are valid as they are. (Every simulator scenario's
exposition is pinned byte for byte by test_metrics_golden.py.)"""

from __future__ import annotations

import math
import re

import pytest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import generate_latest

from smartarray_agent.collectors.families import Families
from smartarray_agent.collectors.redfish.metrics import battery_families
from smartarray_agent.collectors.redfish.resources import ArrayController, Battery, Reading
from smartarray_agent.collectors.ssacli import metrics as ssacli_metrics
from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.exporter.textformat import exposition
from smartarray_agent.sources import metric_help

from .captures import needs_captures, real_files

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")


class _Registry:
    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = metrics

    def collect(self) -> list[Metric]:
        return self.metrics


def reference(metrics: list[Metric]) -> bytes:
    return generate_latest(_Registry(metrics))


def capture_families() -> list[tuple[str, list[Metric]]]:
    out = []
    for path in real_files():
        try:
            snapshot = parse(path.read_text(errors="replace"))
        except ParseError:
            continue  # not CLI output: nothing to render
        out.append((path.name, ssacli_metrics.families(snapshot, 80.0)))
    return out


@needs_captures
def test_every_real_capture_is_written_as_generate_latest_writes_it():
    rendered = capture_families()
    assert len(rendered) > 20
    for name, metrics in rendered:
        assert exposition(metrics) == reference(metrics), name


def test_label_values_and_help_texts_are_escaped_as_generate_latest_escapes_them():
    out = Families({"smartarray_test": 'a "help" text with \\ and\nanother line'})
    for value in ('plain', 'with "quotes"', "back\\slash", "new\nline", "tab\there",
                  "ünïcödé ✓", "50% %s", "", "\\n literally", '\\"'):
        out.gauge("smartarray_test", {"word": value, "controller": "0"}, 1.0)
    metrics = out.metrics()
    written = exposition(metrics)
    assert written == reference(metrics)
    assert b'word="back\\\\slash"' in written
    assert b'# HELP smartarray_test a "help" text with \\\\ and\\nanother line\n' in written


@pytest.mark.parametrize("value", [0.0, 1.0, -1.0, 0.75, 1.7e9, 1_700_000_000.123, 123456789.0,
                                   1e-7, 5e21, math.inf, -math.inf, math.nan, 3, True])
def test_every_kind_of_number_is_written_as_generate_latest_writes_it(value):
    out = Families({"smartarray_test": "help"})
    out.gauge("smartarray_test", {}, value)
    out.gauge("smartarray_test", {"controller": "1"}, value)
    assert exposition(out.metrics()) == reference(out.metrics())


def test_labels_are_sorted_by_name_and_families_keep_their_order():
    out = Families({"smartarray_b": "b", "smartarray_a": "a"})
    out.gauge("smartarray_b", {"state": "ok", "controller": "0", "battery": "1"}, 1.0)
    out.gauge("smartarray_a", {}, 2.0)
    assert exposition(out.metrics()) == (
        b"# HELP smartarray_b b\n# TYPE smartarray_b gauge\n"
        b'smartarray_b{battery="1",controller="0",state="ok"} 1.0\n'
        b"# HELP smartarray_a a\n# TYPE smartarray_a gauge\nsmartarray_a 2.0\n")


def test_only_gauges_are_written():
    counter = CounterMetricFamily("smartarray_test", "help", value=1.0)
    with pytest.raises(ValueError, match="smartarray_test: a counter"):
        exposition([counter])


def test_every_metric_name_needs_no_escaping():
    for name in metric_help():
        assert _METRIC_NAME.match(name), name


@needs_captures
def test_every_label_name_needs_no_escaping():
    battery = Battery(index=1, model="m", product_name="p", serial="s", firmware="f",
                      charge_percent=61, wear_percent=5, capacity_watts=96,
                      remaining_charge_time_s=1740, health="ok")
    reading = Reading(taken_at=1.0, batteries=[battery],
                      controllers=[ArrayController(resource="/ac/0/", slot="0",
                                                   backup_power="present")])
    metrics = [m for _, family in capture_families() for m in family]
    metrics += battery_families(reading)
    names = {label for m in metrics for sample in m.samples for label in sample.labels}
    assert {"controller", "state", "logical_drive"} <= names
    for name in names:
        assert _LABEL_NAME.match(name), name
