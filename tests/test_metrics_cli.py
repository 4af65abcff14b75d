"""``smartarray-agent metrics`` (``--once``), ``--textfile DIR`` and ``--input FILE``: one
collection or one saved capture, then exit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from smartarray_agent.cli import exitcodes
from smartarray_agent.collectors.ssacli.collector import SsacliCollector

from .agent_cli import Ran, agent
from .agent_process import parse_samples, scenario_file, value
from .promtool import PROMTOOL, check_metrics


def metrics(tmp_path, *args: str, stdin: bytes | None = None) -> Ran:
    """``metrics --config FILE ARGS``, in this process (tests/agent_cli.py)."""
    config = tmp_path / "agent.toml"
    config.write_text(f'[ssacli]\nlock_file = "{tmp_path}/cli.lock"\n')
    return agent("metrics", "--config", str(config), *args, stdin=stdin,
                 env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim-state")})


def saved_output(tmp_path, scenario: str, command: str = "ctrl all show config detail"):
    """What the simulated CLI prints for ``command``, saved to a file, as from another host."""
    printed = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "simulate", "run", scenario,
         "--state-dir", str(tmp_path / "other-host"), "--", *command.split()],
        capture_output=True, timeout=60)
    path = tmp_path / "box1.txt"
    path.write_bytes(printed.stdout)
    return path


def ssacli_samples(text: str) -> dict:
    """The samples of the ssacli collector's own families (docs/metrics.md)."""
    return {key: v for key, v in parse_samples(text).items() if key[0].startswith(
        tuple(SsacliCollector.HELP))}


def test_once_prints_the_exposition(tmp_path):
    result = metrics(tmp_path, "--once", "--simulate", "unsafe-nbwc")
    assert result.returncode == 0, result.stderr
    samples = parse_samples(result.stdout)
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 1
    if PROMTOOL:
        check_metrics(result.stdout.encode())


def test_with_no_option_it_prints_the_page_once(tmp_path):
    """What a person expects of ``metrics`` alone: the page, as --once prints it (it was a
    usage error; issue #43 finding 7)."""
    result = metrics(tmp_path, "--simulate", "unsafe-nbwc")
    assert result.returncode == 0, result.stderr
    samples = parse_samples(result.stdout)
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1


@pytest.mark.parametrize("where", ["file", "stdin"])
def test_input_prints_the_page_a_saved_capture_gives(tmp_path, where):
    """``metrics --input FILE`` (``-``: standard input) is the page the ssacli collector gives
    for that output, as ``status --input`` reads it: nothing of this host is added (issue
    #43 finding 7)."""
    saved = saved_output(tmp_path, "unsafe-nbwc")
    result = (metrics(tmp_path, "--input", str(saved)) if where == "file"
              else metrics(tmp_path, "--input", "-", stdin=saved.read_bytes()))
    assert result.returncode == 0, result.stderr
    page = result.stdout
    collected = ssacli_samples(metrics(tmp_path, "--simulate", "unsafe-nbwc").stdout)
    # The CLI's version comes from its own command, which a saved detail does not hold.
    assert ssacli_samples(page) == {key: v for key, v in collected.items()
                                    if key[0] != "smartarray_cli_info"}
    samples = parse_samples(page)
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 1
    assert {dict(labels).get("collector") for name, labels in samples
            if name.startswith("smartarray_collector_")} == {"ssacli"}  # no sysfs, no iLO
    if PROMTOOL:
        check_metrics(result.stdout.encode())


def test_input_of_a_vendor_error_is_a_failed_collector(tmp_path):
    saved = tmp_path / "box1.txt"
    saved.write_text("\nError: No controllers detected. Possible causes: ...\n")
    result = metrics(tmp_path, "--input", str(saved))
    assert result.returncode == exitcodes.COLLECTOR_FAILED, result.stderr
    assert "collector ssacli failed: " in result.stderr
    samples = parse_samples(result.stdout)
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 0


def test_input_that_is_not_cli_output_is_bad_input(tmp_path):
    saved = tmp_path / "box1.txt"
    saved.write_text("hello\n")
    result = metrics(tmp_path, "--input", str(saved))
    assert result.returncode == exitcodes.BAD_INPUT
    assert result.stdout == ""


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
    assert metrics(tmp_path, "--once", "--textfile", str(tmp_path)).returncode == 2
    assert metrics(tmp_path, "--input", "-", "--simulate", "gen9-battery").returncode == 2
    result = metrics(tmp_path, "--textfile", str(tmp_path / "missing"))
    assert result.returncode == 2 and "not a directory" in result.stderr


def test_an_unknown_scenario_is_bad_usage_exit_2(tmp_path):
    result = metrics(tmp_path, "--once", "--simulate", "no-such-scenario")
    assert result.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in result.stderr
