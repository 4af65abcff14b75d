"""How the command line starts: its help, usage errors, the version (the program's logic, in
this process: tests/agent_cli.py), and shell completion (typer's scripts, run in bash, zsh
and fish, and the program, a process of its own, answering them)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from . import matrix
from .agent_cli import agent, commands

COMMANDS = ["status", "check", "set-cache-ratio", "write-cache", "run", "metrics", "serve",
            "config", "simulate"]


def listed(help_text: str) -> list[str]:
    """The command names a help text lists under Commands."""
    section = help_text.split("Commands:\n")[1]
    return [line.split()[0] for line in section.splitlines()
            if line.startswith("  ") and not line.startswith("   ")]


def test_help_lists_every_command_and_h_is_help():
    result = agent("--help")
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: smartarray-agent [OPTIONS] COMMAND [ARGS]...")
    assert listed(result.stdout) == COMMANDS
    assert agent("-h").stdout == result.stdout


def test_no_command_prints_the_help_and_exits_2():
    result = agent()
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: smartarray-agent [OPTIONS] COMMAND [ARGS]...")
    assert listed(result.stderr) == COMMANDS


@pytest.mark.parametrize(("group", "names"), [("config", ["check"]),
                                              ("simulate", ["list", "run", "reset", "ilo",
                                                            "charge"])])
def test_a_group_without_its_command_prints_its_help_and_exits_2(group, names):
    result = agent(group)
    assert result.returncode == 2
    assert result.stderr.startswith(f"Usage: smartarray-agent {group} [OPTIONS] COMMAND")
    assert listed(result.stderr) == names


def test_every_command_has_help_that_starts_with_its_usage():
    paths = [path for path, _ in commands()]
    assert paths == [
        ["status"], ["check"], ["set-cache-ratio"], ["write-cache"], ["run"], ["metrics"],
        ["serve"], ["config", "check"], ["simulate", "list"], ["simulate", "run"],
        ["simulate", "reset"], ["simulate", "ilo"], ["simulate", "charge"]]
    for path in paths:
        result = agent(*path, "-h")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"Usage: smartarray-agent {' '.join(path)} [OPTIONS]")


def test_an_unknown_command_is_a_usage_error():
    result = agent("stauts")
    assert result.returncode == 2
    assert "No such command 'stauts'. Did you mean 'status'?" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["status", "--timeout", "0.5"], "'-t' / '--timeout': 0.5 is not in the range 1<=x<=3600"),
    (["status", "-t", "soon"], "'-t' / '--timeout': 'soon' is not a number"),
    (["status", "-t", "inf"], "'-t' / '--timeout': 'inf' is not a finite number"),
    (["set-cache-ratio", "25/75", "--slot", "0", "--threshold", "101"],
     "'--threshold': 101 is not in the range 0<=x<=100"),
    (["set-cache-ratio", "25/75", "--slot", "0", "--threshold", "nan"],
     "'--threshold': 'nan' is not a finite number"),
    (["write-cache", "on", "--what", "drive", "--slot", "0"],
     "'SWITCH': Value error, 'on' is not one of 'enable', 'disable'."),
    (["write-cache", "enable", "--what", "all", "--slot", "0"],
     "'--what': Value error, 'all' is not one of 'no-battery', 'drive', 'logical-drive'."),
    (["write-cache", "enable", "--slot", "0"], "Missing option '--what'."),
    (["run", "--log-level", "loud"], "'--log-level': Value error, 'loud' is not one of"),
    (["status", "--jso"], "No such option: --jso"),  # no abbreviations
    (["status", "extra"], "Got unexpected extra argument(s) (extra)"),
    # issue #30, finding 5: usage errors found after parsing read as typer's own
    (["set-cache-ratio", "50/50", "--simulate", "gen9-battery"],
     "name the controller with --slot or --serial, or give --all"),
    (["set-cache-ratio", "30/60", "--slot", "0", "--simulate", "gen9-battery"],
     "Invalid value for READ/WRITE: '30/60' is not READ/WRITE integers that sum to 100"),
    (["metrics", "--once", "--textfile", "/tmp", "--simulate", "gen9-battery"],
     "--once and --textfile exclude each other"),
    (["write-cache", "enable", "--what", "logical-drive", "--slot", "0"],
     "--what logical-drive needs the logical drive's number: --what logical-drive N"),
    (["write-cache", "enable", "--what", "drive", "1", "--slot", "0"],
     "got '1', but only --what logical-drive takes a logical drive number"),
])
def test_a_bad_option_or_value_is_a_usage_error_exit_2(args, message):
    result = agent(*args)
    assert result.returncode == 2
    command = args[0]
    assert result.stderr.startswith(f"Usage: smartarray-agent {command} [OPTIONS]")
    assert f"Try 'smartarray-agent {command} -h' for help." in result.stderr
    assert message in result.stderr


def test_version_and_short_help():
    version = agent("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("smartarray-agent ")
    short = agent("status", "-h")
    assert short.returncode == 0
    assert short.stdout.startswith("Usage: smartarray-agent status [OPTIONS]")
    for option in ("--json", "-i, --input FILE", "--config FILE", "--simulate SCENARIO",
                   "-t, --timeout SECONDS", "--lock-file FILE", "-h, --help"):
        assert option in short.stdout


def test_options_and_arguments_come_in_any_order(tmp_path):
    """The logical drive number may follow options."""
    audit = tmp_path / "audit.jsonl"  # not root's default, /var/lib/smartarray-agent
    result = agent("write-cache", "enable", "--what", "logical-drive", "1", "--slot", "0",
                   "--simulate", "gen9-battery", "--dry-run", "--audit-file", str(audit),
                   env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")})
    assert result.returncode == 0, result.stderr
    assert "logical drive 1" in result.stdout
    assert "caching of logical drive 1" in audit.read_text()  # its record, where asked


# -- shell completion: typer's scripts, in the shells themselves --------------------------

# What a shell's completion of the words typed after the program's name offers.
SHELL_CASES = [
    (["s"], ["status", "set-cache-ratio", "serve", "simulate"]),
    (["check", "--cr"], ["--critical"]),
    (["config", ""], ["check"]),
    (["write-cache", "enable", "--what", "l"], ["logical-drive"]),
    (["write-cache", "enable", "--what", "drive", "--usage", "u"], ["unconfigured"]),
]
# The program answers every case (in this process, as each shell's script asks it: bash's
# protocol). Each shell's script hands the words to the program and reads its answers back, the
# same for a command, an option or a choice; each run starts the shell and the program, so by
# default the scripts complete one case of several answers, every case with --full-matrix
# (tests/matrix.py), and the file names the shell offers itself.
SCRIPT_CASES = matrix.chosen(SHELL_CASES, lambda case: case == SHELL_CASES[0])


@pytest.mark.parametrize(("words", "answer"), SHELL_CASES)
def test_the_program_completes_commands_options_and_choices(words, answer):
    result = agent(env={**os.environ, "_SMARTARRAY_AGENT_COMPLETE": "complete_bash",
                        "COMP_WORDS": " ".join(["smartarray-agent", *words]),
                        "COMP_CWORD": str(len(words))})
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(answer)


@pytest.fixture(scope="module")
def shell_host(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A folder holding box1.txt and box2.txt, and an environment whose PATH finds the
    program the scripts call back by its name: this interpreter's stands in for it."""
    folder = tmp_path_factory.mktemp("completion")
    program = folder / "bin" / "smartarray-agent"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec {sys.executable} -m smartarray_agent \"$@\"\n")
    program.chmod(0o755)
    (folder / "box1.txt").write_text("")
    (folder / "box2.txt").write_text("")
    return folder, {**os.environ, "PATH": f"{program.parent}:{os.environ.get('PATH', '')}"}


def in_shell(shell_host, shell: str, code: str) -> list[str]:
    """The lines ``code`` prints in ``shell``; nothing on standard error."""
    if not shutil.which(shell):
        pytest.skip(f"no {shell}")
    folder, env = shell_host
    done = subprocess.run([shell, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=folder, env=env)
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.splitlines()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_of_the_shell_it_runs_in(shell_host, shell):
    # "; true": the shell stays the program's parent (a last command it would exec)
    script = in_shell(shell_host, shell, "smartarray-agent --show-completion; true")
    assert "_SMARTARRAY_AGENT_COMPLETE=complete_" + shell in "\n".join(script)


def sourced(shell_host, shell: str) -> str:
    """A shell command that reads the program's completion script for ``shell``, asked for
    by name as the packages do (packaging/stage.sh)."""
    folder, env = shell_host
    script = folder / f"completion.{shell}"
    if not script.exists():
        result = agent(env={**env, "_SMARTARRAY_AGENT_COMPLETE": f"source_{shell}"})
        assert result.returncode == 0, result.stderr
        script.write_text(result.stdout)
    return f"source {script}"


@pytest.mark.parametrize(("words", "answer"), SCRIPT_CASES)
def test_the_bash_script_completes_commands_options_and_choices(shell_host, words, answer):
    typed = " ".join(shlex.quote(word) for word in ["smartarray-agent", *words])
    offered = in_shell(shell_host, "bash",
                       f"{sourced(shell_host, 'bash')}\n"
                       f"COMP_WORDS=({typed}); COMP_CWORD={len(words)}; "
                       '_smartarray_agent_completion smartarray-agent; '
                       'printf "%s\\n" "${COMPREPLY[@]}"')
    assert sorted(offered) == sorted(answer)


def test_bash_completes_file_names_where_the_program_offers_nothing(shell_host):
    """``complete -o default``: bash's own file names for a file option's value."""
    lines = in_shell(shell_host, "bash", f"{sourced(shell_host, 'bash')}\n"
                                         "complete -p smartarray-agent")
    assert lines == ["complete -o default -F _smartarray_agent_completion smartarray-agent"]
    offered = in_shell(shell_host, "bash",
                       f"{sourced(shell_host, 'bash')}\n"
                       "COMP_WORDS=(smartarray-agent status --input bo); COMP_CWORD=3; "
                       '_smartarray_agent_completion smartarray-agent; '
                       'echo "${#COMPREPLY[@]}"')
    assert offered == ["0"]


@pytest.mark.parametrize(("words", "answer"), [
    *SCRIPT_CASES,
    (["status", "--input", "bo"], ["box1.txt", "box2.txt"]),  # fish's own file names
])
def test_the_fish_script_completes_commands_options_choices_and_files(
        shell_host, words, answer):
    line = shlex.join(["smartarray-agent", *words])
    offered = in_shell(shell_host, "fish", f"{sourced(shell_host, 'fish')}\n"
                                           f"complete --do-complete={shlex.quote(line)}")
    assert sorted(entry.split("\t")[0] for entry in offered) == sorted(answer)


# zsh's completion builtins work only inside its completion system: these stand in for
# them, printing what the script hands them.
ZSH_STANDINS = ("compdef() { : }; _arguments() { print -l -- $@ }; "
                "_files() { print -- _files $@ }")


@pytest.mark.parametrize(("words", "answer"), [
    *SCRIPT_CASES,
    (["status", "--input", "bo"], ["_files"]),  # zsh's own file names
])
def test_the_zsh_script_calls_the_program_back(shell_host, words, answer):
    typed = " ".join(shlex.quote(word) for word in ["smartarray-agent", *words])
    offered = in_shell(shell_host, "zsh", f"{ZSH_STANDINS}\n{sourced(shell_host, 'zsh')}\n"
                                          f"words=({typed}); CURRENT={len(words) + 1}; "
                                          "_smartarray_agent_completion")
    if answer == ["_files"]:
        assert offered == answer
    else:  # _arguments '*: :(("NAME":"HELP" "NAME" ...))'
        [spec] = offered
        assert spec.startswith("*: :((")
        assert sorted(re.findall(r'(?:\(\(|\s)"([^"]+)"', spec)) == sorted(answer)
