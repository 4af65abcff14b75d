"""What a newcomer tripped on (issue #30, findings 3, 4 and 5): the README's commands as
written, docs that stay in the repository, and the smaller points, each as it was seen."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from smartarray_agent.cli import configcheck
from smartarray_agent.cli.app import app
from smartarray_agent.collectors.sysfs import DRIVERS
from smartarray_agent.common.model import Snapshot
from smartarray_agent.config import SsacliConfig
from smartarray_agent.vendor import vendor_cli

from .agent_cli import agent
from .terminal import Terminal

ROOT = Path(__file__).resolve().parent.parent
AGENT = [sys.executable, "-m", "smartarray_agent"]


def _section(text: str, heading: str) -> str:
    return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(section: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", section, re.S)


# -- finding 3: the README's "Using it" lines work after its first command -------------------
def test_the_readmes_simulator_lines_run_as_written_after_its_install(tmp_path):
    """The first command leaves the program in ~/.venvs/smartarray-agent/bin; "Using it"
    first says how to reach it from a plain shell."""
    home = tmp_path / "home"
    bin_dir = home / ".venvs" / "smartarray-agent" / "bin"
    bin_dir.mkdir(parents=True)
    program = bin_dir / "smartarray-agent"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} -m smartarray_agent \"$@\"\n")
    program.chmod(0o755)
    using = _section((ROOT / "README.md").read_text(), "Using it")
    setup = _blocks(using)[0]
    # The section's lines change controllers and write root's audit log; one that reads
    # nothing shows the program is reached.
    script = f"set -eu\n{setup}\nsmartarray-agent simulate list"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                            timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "gen9-battery" in result.stdout


# -- finding 4: the docs stay in the repository --------------------------------------------
def test_no_doc_sends_the_reader_to_files_outside_the_repository():
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = doc.read_text()
        for outside in ("DESIGN.md", "FACTS.md", "../shared/DESIGN"):
            assert outside not in text, f"{doc.name} names {outside}"


@functools.cache
def _contract_fields() -> frozenset[str]:
    """Every field name ``status --json`` can print: the properties of the snapshot's JSON
    Schema and of every model it nests (its ``$defs``), wherever that model is defined."""
    schema = Snapshot.model_json_schema(mode="serialization")
    return frozenset(name for model in (schema, *schema["$defs"].values())
                     for name in model.get("properties", {}))


def _left_out(contract: str) -> list[str]:
    return sorted(name for name in _contract_fields() if f'"{name}"' not in contract)


def test_the_status_contract_is_in_docs_with_every_field():
    contract = (ROOT / "docs" / "status.md").read_text()
    assert "status.schema.json" in contract
    assert not _left_out(contract), f"docs/status.md leaves out {_left_out(contract)}"


def test_a_nested_field_left_out_of_the_docs_fails_the_contract_check():
    """Issue #49 item 3: the check walks the nested models, not only the snapshot's own five
    fields; each nested field's name taken out of docs/status.md is reported."""
    contract = (ROOT / "docs" / "status.md").read_text()
    nested = _contract_fields() - set(Snapshot.model_fields)
    assert len(nested) > 50  # controllers, caches, batteries, drives, temperatures...
    for name in sorted(nested):
        assert _left_out(contract.replace(f'"{name}"', "")) == [name]


# -- finding 5: the smaller points ---------------------------------------------------------
def test_ctrl_c_at_the_question_says_not_confirmed_once(tmp_path):
    command = Terminal(
        [*AGENT, "write-cache", "enable", "--what", "no-battery", "--slot", "0",
         "--simulate", "gen9-battery", "--audit-file", str(tmp_path / "audit.jsonl"),
         "--lock-file", str(tmp_path / "cli.lock")],
        env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")}, timeout=60)
    command.expect(r"\[y/N\]: ")
    command.sendintr()
    command.expect(pexpect.EOF)
    command.close()
    assert command.exitstatus == 6
    assert command.before.count("not confirmed") == 1, command.before


@pytest.mark.parametrize("ratio", ["50/50", "0/100"])
def test_any_ratio_with_writes_on_a_failed_battery_says_write_cache_stays_inactive(
        tmp_path, ratio):
    result = agent("set-cache-ratio", ratio, "--slot", "0", "--simulate", "failed-battery",
                   "--audit-file", tmp_path / "audit.jsonl", "--lock-file", tmp_path / "lock")
    assert result.returncode == 0, result.stderr
    assert "write cache stays inactive until backup power is back" in result.stdout


def test_a_misspelled_section_is_called_a_section_with_the_closest_name(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[polcy]\nbattery_threshold_percent = 70\n[web]\nlisten_adress = "x"\n')
    result = CliRunner().invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 2
    assert f"{config}:1: polcy: unknown section (did you mean [policy]?)" in result.output
    assert f"{config}:4: web.listen_adress: unknown key (did you mean listen_address?)" \
        in result.output


def test_config_check_without_any_file_says_the_defaults_apply(tmp_path, monkeypatch):
    monkeypatch.setattr(configcheck, "CONFIG_FILE", str(tmp_path / "config.toml"))
    result = CliRunner().invoke(app, ["config", "check"])
    assert result.exit_code == 0, result.output
    assert "the agent runs on its defaults" in result.output
    named = CliRunner().invoke(app, ["config", "check", str(tmp_path / "config.toml")])
    assert named.exit_code == 2  # a file named and missing is still an error


def test_the_services_status_without_a_cli_is_short_and_names_the_config_keys(
        tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("smartarray_agent.collectors.ssacli.discover.VENDOR_DIRS",
                        ("/nonexistent/one", "/nonexistent/two"))
    with pytest.raises(Exception) as service:
        vendor_cli(SsacliConfig(), service=True)
    message = str(service.value)
    assert "/nonexistent" not in message and "--simulate" not in message
    assert "[ssacli] simulate" in message and "[ssacli] path" in message
    with pytest.raises(Exception) as command:
        vendor_cli(SsacliConfig())
    assert "/nonexistent/one" in str(command.value) and "--simulate" in str(command.value)


def test_the_packaged_configs_sysfs_comment_names_every_driver():
    text = (ROOT / "packaging" / "config.toml").read_text()
    sysfs = text.split("# [sysfs]\n", 1)[1].split("\n\n", 1)[0]
    for driver in DRIVERS:
        assert driver in sysfs, driver
