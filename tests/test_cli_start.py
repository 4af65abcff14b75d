"""How the command line starts: help from the command table, usage errors, the version,
and shell completion (the scripts, and the program answering them)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smartarray_agent import cli
from smartarray_agent.cli.command import Command, Group


def agent(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smartarray_agent", *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_help_lists_every_command_from_the_table():
    result = agent("--help")
    assert result.returncode == 0
    listed = result.stdout.split("commands:\n")[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and
             not line.startswith("   ")]
    assert names == list(cli.COMMANDS)
    flat = " ".join(listed.split())
    for name, entry in cli.COMMANDS.items():
        assert f"{name} {entry.help}" in flat


def test_no_command_prints_the_help_and_exits_2():
    result = agent()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: smartarray-agent [OPTIONS] COMMAND [ARGS]...")
    assert "commands:" in result.stderr


@pytest.mark.parametrize("group", ["config", "simulate"])
def test_a_group_without_its_command_prints_its_help_and_exits_2(group):
    result = agent(group)
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: smartarray-agent {group} [OPTIONS] COMMAND")
    assert "commands:" in result.stderr


def test_every_table_entry_is_a_command_whose_help_formats():
    for name in cli.COMMANDS:
        node = cli.load(name)
        assert isinstance(node, Command | Group), name
        assert node.parser(f"smartarray-agent {name}").format_help().startswith(
            f"usage: smartarray-agent {name} ")
    commands = list(cli.APP.walk())
    assert [path for path, _ in commands] == [
        ["status"], ["check"], ["set-cache-ratio"], ["write-cache"], ["run"], ["metrics"],
        ["serve"], ["config", "check"], ["simulate", "list"], ["simulate", "run"]]
    for path, command in commands:  # every help text formats (a bare % would not)
        prog = " ".join(["smartarray-agent", *path])
        assert command.parser(prog).format_help().startswith(f"usage: {prog} ")


def test_an_unknown_command_is_a_usage_error():
    result = agent("stauts")
    assert result.returncode == 2
    assert "argument COMMAND: invalid choice: 'stauts'" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["status", "--timeout", "0.5"], "argument -t/--timeout: 0.5 is not in the range x>=1"),
    (["status", "-t", "soon"], "argument -t/--timeout: 'soon' is not a number"),
    (["set-cache-ratio", "25/75", "--slot", "0", "--threshold", "101"],
     "argument --threshold: 101 is not in the range 0<=x<=100"),
    (["write-cache", "on", "--what", "drive", "--slot", "0"],
     "argument enable|disable: invalid choice: 'on'"),
    (["write-cache", "enable", "--what", "all", "--slot", "0"],
     "argument --what: invalid choice: 'all'"),
    (["write-cache", "enable", "--slot", "0"], "the following arguments are required: --what"),
    (["status", "--jso"], "unrecognized arguments: --jso"),  # no abbreviations
    (["status", "extra"], "unrecognized arguments: extra"),
    (["--show-completion", "tcsh"], "argument --show-completion: invalid choice: 'tcsh'"),
])
def test_a_bad_option_or_value_is_a_usage_error_exit_2(args, message):
    result = agent(*args, "--input", "-")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: smartarray-agent")
    assert message in result.stderr


def test_version_and_short_help():
    version = agent("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("smartarray-agent ")
    short = agent("status", "-h")
    assert short.returncode == 0
    assert short.stdout.startswith("usage: smartarray-agent status [-h] [--json] [-i FILE]")
    for option in ("--json", "-i FILE, --input FILE", "--config FILE", "--simulate SCENARIO",
                   "-t SECONDS, --timeout SECONDS", "--lock-file FILE"):
        assert option in short.stdout


def test_options_and_arguments_come_in_any_order(tmp_path):
    """The logical drive number may follow options."""
    audit = tmp_path / "audit.jsonl"  # not root's default, /var/lib/smartarray-agent
    result = agent("write-cache", "enable", "--what", "logical-drive", "1", "--slot", "0",
                   "--simulate", "gen9-battery", "--dry-run", "--audit-file", str(audit))
    assert result.returncode == 0, result.stderr
    assert "logical drive 1" in result.stdout
    assert "caching of logical drive 1" in audit.read_text()  # its record, where asked


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_a_script_that_calls_the_program_back(shell):
    result = agent("--show-completion", shell)
    assert result.returncode == 0, result.stderr
    assert f"{cli.COMPLETE}={shell}" in result.stdout
    assert "_smartarray_agent_completion" in result.stdout


def complete(*words: str) -> tuple[str, list[str]]:
    """The program's answer to a completion of ``words``, the last one being typed."""
    result = agent(*words, env={**os.environ, cli.COMPLETE: "bash"})
    assert result.returncode == 0, result.stderr
    kind, *candidates = result.stdout.splitlines()
    return kind, candidates


def test_completing_a_command_name_and_an_option():
    assert complete("s") == ("plain", ["status", "set-cache-ratio", "serve", "simulate"])
    assert complete("check", "--cr") == ("plain", ["--critical"])


@pytest.mark.parametrize(("words", "answer"), [
    (["-"], ["-h", "--help", "--version", "--show-completion"]),
    (["--show-completion", ""], ["bash", "zsh", "fish"]),
    (["config", ""], ["check"]),
    (["simulate", "r"], ["run"]),
    (["write-cache", ""], ["enable", "disable"]),
    (["write-cache", "enable", "--what", ""], ["no-battery", "drive", "logical-drive"]),
    (["write-cache", "enable", "--what", "drive", "--usage", "u"], ["unconfigured"]),
    (["status", "--json", "--j"], []),  # given already
    (["status", "--", "-"], []),  # no options after --
    (["set-cache-ratio", ""], []),
    (["stauts", ""], []),
])
def test_completing_names_options_and_choices(words, answer):
    assert complete(*words) == ("plain", answer)


@pytest.mark.parametrize(("words", "kind"), [
    (["status", "--input", ""], "file"),
    (["status", "--config", "/e"], "file"),
    (["run", "--cli", ""], "file"),
    (["config", "check", ""], "file"),
    (["metrics", "--textfile", ""], "dir"),
    (["simulate", "run", "gen9-battery", "--state-dir", ""], "dir"),
])
def test_completing_a_file_option_leaves_the_names_to_the_shell(words, kind):
    assert complete(*words) == (kind, [])


# What a shell's completion of the words typed after the program's name offers, in a folder
# holding box1.txt, box2.txt and bin/.
SHELL_CASES = [
    (["s"], ["status", "set-cache-ratio", "serve", "simulate"]),
    (["check", "--cr"], ["--critical"]),
    (["write-cache", "enable", "--what", "l"], ["logical-drive"]),
    (["status", "--input", "bo"], ["box1.txt", "box2.txt"]),
    (["metrics", "--textfile", "b"], ["bin/"]),
]


@pytest.fixture(scope="module")
def shell_host(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A folder holding the files of SHELL_CASES, and an environment whose PATH finds the
    program the scripts call back by the name typed: this interpreter's stands in for it."""
    folder = tmp_path_factory.mktemp("completion")
    program = folder / "bin" / "smartarray-agent"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec {sys.executable} -m smartarray_agent \"$@\"\n")
    program.chmod(0o755)
    (folder / "box1.txt").write_text("")
    (folder / "box2.txt").write_text("")
    return folder, {**os.environ, "PATH": f"{program.parent}:{os.environ.get('PATH', '')}"}


def in_shell(shell_host, shell: str, code: str, before: str = "") -> list[str]:
    """The lines ``code`` prints in ``shell`` once it has run ``before`` and read the
    completion script; nothing on standard error."""
    if not shutil.which(shell):
        pytest.skip(f"no {shell}")
    folder, env = shell_host
    script = folder / f"completion.{shell}"
    script.write_text(agent("--show-completion", shell).stdout)
    done = subprocess.run([shell, "-c", f"{before}\nsource {script}\n{code}"],
                          capture_output=True, text=True, timeout=60, cwd=folder, env=env)
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.splitlines()


@pytest.mark.parametrize(("words", "answer"), SHELL_CASES)
def test_the_bash_script_completes_commands_options_choices_and_files(
        shell_host, words, answer):
    typed = " ".join(shlex.quote(word) for word in ["smartarray-agent", *words])
    offered = in_shell(shell_host, "bash",
                       f"COMP_WORDS=({typed}); COMP_CWORD={len(words)}; "
                       '_smartarray_agent_completion smartarray-agent; '
                       'printf "%s\\n" "${COMPREPLY[@]}"')
    # bash adds the slash of a directory itself (compopt -o filenames)
    assert sorted(offered) == sorted(word.rstrip("/") for word in answer)


@pytest.mark.parametrize(("words", "answer"), SHELL_CASES)
def test_the_fish_script_completes_commands_options_choices_and_files(
        shell_host, words, answer):
    line = shlex.join(["smartarray-agent", *words])
    offered = in_shell(shell_host, "fish", f"complete --do-complete={shlex.quote(line)}")
    assert sorted(entry.split("\t")[0] for entry in offered) == sorted(answer)


# zsh's completion builtins work only inside its completion system: these stand in for
# them, printing what the script hands them.
ZSH_STANDINS = ("compdef() { : }; compadd() { shift ${@[(i)--]}; print -l -- $@ }; "
                "_files() { print -- _files $@ }")


@pytest.mark.parametrize(("words", "answer"), [
    *SHELL_CASES[:3],
    (["status", "--input", "bo"], ["_files"]),
    (["metrics", "--textfile", "b"], ["_files -/"]),
])
def test_the_zsh_script_calls_the_program_back(shell_host, words, answer):
    typed = " ".join(shlex.quote(word) for word in ["smartarray-agent", *words])
    offered = in_shell(shell_host, "zsh", f"words=({typed}); CURRENT={len(words) + 1}; "
                                          "_smartarray_agent_completion", ZSH_STANDINS)
    assert offered == answer
