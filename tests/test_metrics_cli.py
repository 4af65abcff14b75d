"""``smartarray-agent metrics --once`` and ``--textfile DIR``: one collection, then exit."""

from __future__ import annotations

import os
import stat

from smartarray_agent.cli import exitcodes

from .agent_cli import Ran, agent
from .agent_process import parse_samples, scenario_file, value
from .promtool import PROMTOOL, check_metrics


def metrics(tmp_path, *args: str) -> Ran:
    """``metrics --config FILE ARGS``, in this process (tests/agent_cli.py)."""
    config = tmp_path / "agent.toml"
    config.write_text(f'[ssacli]\nlock_file = "{tmp_path}/cli.lock"\nconsole = false\n')
    return agent("metrics", "--config", str(config), *args,
                 env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim-state")})


def test_once_prints_the_exposition(tmp_path):
    result = metrics(tmp_path, "--once", "--simulate", "unsafe-nbwc")
    assert result.returncode == 0, result.stderr
    samples = parse_samples(result.stdout)
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 1
    if PROMTOOL:
        check_metrics(result.stdout)


def test_textfile_is_replaced_atomically(tmp_path):
    out = tmp_path / "textfile"
    out.mkdir()
    (out / "smartarray.prom").write_text("old\n")
    result = metrics(tmp_path, "--textfile", str(out), "--simulate", "gen10")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == ["smartarray.prom"]  # no temporary left
    written = out / "smartarray.prom"
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    samples = parse_samples(written.read_text())
    assert value(samples, "smartarray_controller_mode", controller="0", mode="mixed") == 1
    # node_exporter reports its own process_*: a textfile repeating them would clash
    assert not [name for name, _ in samples if "process_" in name]


def test_a_failed_collection_still_writes_the_file_and_exits_collector_failed(tmp_path):
    out = tmp_path / "textfile"
    out.mkdir()
    scenario = scenario_file(tmp_path, "gen9-battery", {"garbage": ["*"]})
    result = metrics(tmp_path, "--textfile", str(out), "--simulate", str(scenario))
    assert result.returncode == exitcodes.COLLECTOR_FAILED == 11
    assert "collector ssacli failed: " in result.stderr
    samples = parse_samples((out / "smartarray.prom").read_text())
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 0


def test_bad_usage(tmp_path):
    assert metrics(tmp_path).returncode == 2
    assert metrics(tmp_path, "--once", "--textfile", str(tmp_path)).returncode == 2
    result = metrics(tmp_path, "--textfile", str(tmp_path / "missing"))
    assert result.returncode == 2 and "not a directory" in result.stderr


def test_an_unknown_scenario_is_bad_usage_exit_2(tmp_path):
    result = metrics(tmp_path, "--once", "--simulate", "no-such-scenario")
    assert result.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in result.stderr
