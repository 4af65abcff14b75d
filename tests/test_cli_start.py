"""What a command pays at start: only the module of the command being run is imported,
``--help`` and shell completion read the command table, and nothing of typer or rich is
loaded (#13: commands start fast; docs/benchmarks.md has the figures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest

from smartarray_agent import cli

from .captures import REAL, needs_captures

# Prints the modules a command run imported, whether the garbage collector is on and how
# many objects were frozen out of its last pass, as JSON on standard error, when it exits.
PROBE = """
import atexit, gc, json, sys
atexit.register(lambda: print(json.dumps({"modules": sorted(sys.modules),
                                          "gc": gc.isenabled(),
                                          "frozen": gc.get_freeze_count()}), file=sys.stderr))
from smartarray_agent.cli import main
sys.argv = ["smartarray-agent", *sys.argv[1:]]
main()
"""
COMMAND_MODULES = {entry.target.partition(":")[0] for entry in cli.COMMANDS.values()}


def probe(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                            text=True, timeout=60, env=env)
    state = json.loads(result.stderr.splitlines()[-1])
    if args and not args[0].startswith("-"):  # a command ran: with the collector on
        assert state["gc"] is True
    assert state["frozen"] > 10_000  # what the process held when main() ended: its imports
    return result, set(state["modules"])


def agent(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smartarray_agent", *args],
                          capture_output=True, text=True, timeout=60, env=env)


@needs_captures
def test_status_imports_its_own_module_and_no_other_command():
    capture = REAL / "ssacli-ctrl-all-show-config-detail-P408i-a-1.txt"
    result, modules = probe("status", "--input", str(capture), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip())["controllers"]
    assert modules & COMMAND_MODULES == {"smartarray_agent.cli.status"}
    for heavy in ("typer", "rich", "pygments", "markdown_it", "shellingham", "pydantic",
                  "smartarray_agent.daemon", "smartarray_agent.exporter",
                  "smartarray_agent.write.change", "smartarray_agent.collectors.simulator",
                  "smartarray_agent.collectors.ssacli.runner", "click.shell_completion",
                  # saved output reads no configuration: it may be another host's
                  "smartarray_agent.config", "smartarray_agent.configfile",
                  "smartarray_agent.settings", "smartarray_agent.collectors.redfish"):
        assert not {m for m in modules if m == heavy or m.startswith(heavy + ".")}, heavy


def test_help_lists_every_command_from_the_table_without_importing_one():
    result, modules = probe("--help")
    assert result.returncode == 0
    assert not modules & COMMAND_MODULES
    listed = result.stdout.split("Commands:\n")[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and
             not line.startswith("   ")]
    assert names == list(cli.COMMANDS)
    flat = " ".join(listed.split())
    for name, entry in cli.COMMANDS.items():
        assert f"{name} {entry.help}" in flat


def test_no_command_prints_the_help_and_exits_2():
    result = agent()
    assert result.returncode == 2
    assert "Commands:" in result.stdout + result.stderr


def test_every_table_entry_is_the_command_it_names():
    group = cli.loaded_group()
    assert list(group.commands) == list(cli.COMMANDS)
    for name, command in group.commands.items():
        assert isinstance(command, click.Command)
        assert command.name == name
        assert command.get_short_help_str(limit=200) == cli.COMMANDS[name].help


def test_an_unknown_command_is_a_usage_error():
    result = agent("stauts")
    assert result.returncode == 2
    assert "No such command 'stauts'" in result.stderr


def test_a_bad_option_value_is_a_usage_error_exit_2():
    result = agent("status", "--timeout", "0.5", "--input", "-")
    assert result.returncode == 2
    assert "Invalid value for '-t' / '--timeout': 0.5 is not in the range x>=1.0" in (
        result.stderr)


def test_version_and_short_help():
    version = agent("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("smartarray-agent ")
    short = agent("status", "-h")
    assert short.returncode == 0
    assert short.stdout.startswith("Usage: smartarray-agent status [OPTIONS]")
    for option in ("--json", "-i, --input FILE", "--config FILE", "--simulate SCENARIO",
                   "-t, --timeout SECONDS", "--lock-file FILE"):
        assert option in short.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script(shell):
    result = agent("--show-completion", shell)
    assert result.returncode == 0, result.stderr
    assert "_SMARTARRAY_AGENT_COMPLETE" in result.stdout


def complete(words: str, cword: int) -> tuple[list[str], set[str]]:
    env = {**os.environ, "_SMARTARRAY_AGENT_COMPLETE": "bash_complete",
           "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result, modules = probe(env=env)
    assert result.returncode == 0, result.stderr
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()], modules


def test_completing_a_command_name_imports_no_command():
    words, modules = complete("smartarray-agent s", 1)
    assert words == ["status", "set-cache-ratio", "serve", "simulate"]
    assert not modules & COMMAND_MODULES


def test_completing_an_option_imports_only_that_command():
    words, modules = complete("smartarray-agent check --cr", 2)
    assert words == ["--critical"]
    assert modules & COMMAND_MODULES == {"smartarray_agent.cli.check"}
