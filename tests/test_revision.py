"""``smartarray_build_info{revision}``: the commit the agent was built from (issue #29
finding 9), on the page ``run`` serves over loopback, and the rule that finds it: the stamp
a package carries (tests/test_packaging_build.py builds one), else ``unknown``."""

from __future__ import annotations

import sys
import types

from smartarray_agent import revision

from .agent_process import AgentInProcess, simulated, value


def test_the_served_build_info_names_the_stamped_commit_or_unknown(tmp_path):
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "gen10")).start()
    try:
        samples = agent.wait_for(
            lambda s: value(s, "smartarray_collector_success", collector="ssacli") == 1)
        [labels] = [dict(labels) for name, labels in samples
                    if name == "smartarray_build_info"]
        assert labels["revision"] == revision.revision()
    finally:
        agent.stop()


def test_a_stamped_package_says_its_commit_and_anything_else_is_unknown(monkeypatch):
    revision.revision.cache_clear()
    monkeypatch.setitem(sys.modules, "smartarray_agent._revision", None)  # not stamped
    assert revision.revision() == revision.UNKNOWN
    revision.revision.cache_clear()
    stamp = types.ModuleType("smartarray_agent._revision")
    stamp.REVISION = "e239a16ae3fef935abd555449bcd8d2cbc8c9fe3"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "smartarray_agent._revision", stamp)
    assert revision.revision() == "e239a16ae3fef935abd555449bcd8d2cbc8c9fe3"
    revision.revision.cache_clear()
