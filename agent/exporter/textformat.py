"""Gauge families -> the Prometheus text format 0.0.4, byte for byte what prometheus_client's
``generate_latest`` writes for them (tests/test_textformat.py), at a fraction of its cost.

``generate_latest`` (prometheus_client 0.26) checks and escapes the name of every label of
every sample: 35-40 ms of CPU for the ``large`` scenario's 3,092 samples, against 11-13 ms
here (benchmarks/cost_bench.py).
The agent's metric and label names are its own constants, valid by construction (the tests
check every one), so only label values and HELP texts are escaped here, and each sample
line's template is made once per family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import itemgetter
from typing import Any

from prometheus_client.core import Metric
from prometheus_client.utils import floatToGoString


def exposition(metrics: Iterable[Metric]) -> bytes:
    """The text of gauge ``metrics``, in their order; labels sorted by name."""
    out: list[str] = []
    lines: dict[tuple[str, tuple[str, ...]], tuple[str, Callable[[Mapping[str, str]], Any]]] = {}
    escaped: dict[str, str] = {}  # label values repeat: controllers, drives, state words
    for metric in metrics:
        if metric.type != "gauge":
            raise ValueError(f"{metric.name}: a {metric.type}, and only gauges are written")
        help_text = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {metric.name} {help_text}\n# TYPE {metric.name} gauge\n")
        for sample in metric.samples:
            value = floatToGoString(sample.value)
            if not sample.labels:
                out.append(f"{sample.name} {value}\n")
                continue
            shape = (sample.name, tuple(sample.labels))
            line = lines.get(shape)
            if line is None:
                line = lines[shape] = _line(*shape)
            template, values_of = line
            texts = []
            for text in values_of(sample.labels):
                quoted = escaped.get(text)
                if quoted is None:
                    quoted = escaped[text] = _escape(text)
                texts.append(quoted)
            out.append(template % (*texts, value))
    return "".join(out).encode()


def _line(name: str, labels: tuple[str, ...]) -> tuple[str, Callable[[Mapping[str, str]], Any]]:
    """A sample line's template (%-placeholders for its label values, sorted by label name,
    then its value) and what picks those values from its labels, as a tuple."""
    ordered = sorted(labels)
    pairs = ",".join(f'{label}="%s"' for label in ordered)
    picked = itemgetter(*ordered)
    if len(ordered) == 1:
        return f"{name}{{{pairs}}} %s\n", lambda values: (picked(values),)
    return f"{name}{{{pairs}}} %s\n", picked


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
