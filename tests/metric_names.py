"""Every metric the agent can export, with its HELP text: the page's own, ``/probe``'s and
each collector's, every class implementing collectors/base.py's ``Collector`` that the
agent's builder of collectors imports, so that a new collector cannot be left out (the tests'
own collectors are not the agent's)."""

from __future__ import annotations

import smartarray_agent.sources  # noqa: F401 (imports every collector it builds)
from smartarray_agent.collectors.base import Collector
from smartarray_agent.exporter import render
from smartarray_agent.probe import prober


def metric_help() -> dict[str, str]:
    texts = {**render.HELP, **prober.HELP}
    for kind in Collector.__subclasses__():
        if kind.__module__.startswith("smartarray_agent."):
            texts.update(kind.HELP)
    return texts
