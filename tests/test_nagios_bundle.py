"""The Nagios/Icinga bundle (issue #29, finding 6): ``check_smartarray``, the link the packages
put in the plugin directory, is the ``check`` command; the sudoers drop-in the packages ship as
an example is valid sudoers and allows exactly the command line that the NRPE and Icinga 2
examples beside it run."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "packaging" / "nagios"
PLUGIN = "/usr/lib/nagios/plugins/check_smartarray"  # Debian's plugin directory


def sudoers_rule() -> tuple[str, str, list[str]]:
    """The one rule of the sudoers example: user, command, arguments (unescaped)."""
    rules = [line for line in (EXAMPLES / "sudoers").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(rules) == 1, rules
    match = re.fullmatch(r"(\w+) ALL=\(root\) NOPASSWD: (\S+) (.+)", rules[0])
    assert match, rules[0]
    user, command, args = match.groups()
    return user, command, [word.replace("\\:", ":") for word in args.split()]


def nrpe_command() -> list[str]:
    lines = [line for line in (EXAMPLES / "nrpe.cfg").read_text().splitlines()
             if line.startswith("command[")]
    assert len(lines) == 1, lines
    name, command = re.fullmatch(r"command\[(\w+)\]=(.+)", lines[0]).groups()
    assert name == "check_smartarray"
    return shlex.split(command)


def icinga_command() -> list[str]:
    """The command line the Icinga 2 CheckCommand runs with its default vars, in the order its
    arguments' ``order`` gives (how Icinga 2 builds it)."""
    text = (EXAMPLES / "icinga2.conf").read_text()
    command = re.search(r"command = \[ (.+) \]", text).group(1)
    words = [word.strip() for word in command.split(",")]
    argv = [w.replace('PluginDir + "', "/usr/lib/nagios/plugins").strip('"') for w in words]
    defaults = dict(re.findall(r'vars\.(\w+) = "([^"]*)"', text))
    arguments = re.findall(r'"(-\w)" = \{\s*value = "\$(\w+)\$".*?order = (\d+)', text, re.S)
    assert arguments, "no arguments"
    for option, var, _order in sorted(arguments, key=lambda argument: int(argument[2])):
        argv += [option, defaults[var]]
    return argv


@pytest.mark.skipif(shutil.which("visudo") is None, reason="needs visudo (apt-get install sudo)")
def test_the_sudoers_example_is_valid_sudoers(tmp_path):
    copy = tmp_path / "smartarray-agent-check"  # visudo wants it not writable by others
    copy.write_bytes((EXAMPLES / "sudoers").read_bytes())
    copy.chmod(0o440)
    result = subprocess.run(["visudo", "-cf", str(copy)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_sudo_allows_exactly_what_nrpe_and_icinga_run():
    user, command, args = sudoers_rule()
    assert (user, command) == ("nagios", PLUGIN)
    assert nrpe_command() == ["/usr/bin/sudo", "-n", PLUGIN, *args]
    assert icinga_command() == ["/usr/bin/sudo", "-n", PLUGIN, *args]
    # No wildcard, and none of the options that name a program or a file.
    assert not any(set(word) & set("*?[]!") for word in args), args
    assert not {"--cli", "--config", "--input", "-i", "--lock-file", "--simulate"} & set(args)


def test_the_allowed_arguments_are_a_valid_check(tmp_path):
    *_, args = sudoers_rule()
    env = {k: v for k, v in os.environ.items() if k != "SMARTARRAY_SIM_FAULTS"}
    result = subprocess.run([sys.executable, "-m", "smartarray_agent", "check", *args,
                             "--simulate", "gen9-battery"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_icinga2_example_has_the_shape_of_icinga2_configuration():
    text = (EXAMPLES / "icinga2.conf").read_text()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    code = re.sub(r'"(\\.|[^"\\])*"', '""', code)  # strings may hold anything
    depth = 0
    for character in code:
        depth += {"{": 1, "}": -1, "[": 1, "]": -1}.get(character, 0)
        assert depth >= 0
    assert depth == 0
    assert re.search(r'^object CheckCommand "smartarray" \{$', text, re.M)
    assert re.search(r'^apply Service "smartarray" \{$', text, re.M)
    assert re.search(r"^  timeout = \d+s ", text, re.M)
    used = set(re.findall(r"\$(\w+)\$", text))
    assert used and used == set(re.findall(r"^  vars\.(\w+) = ", text, re.M))


def test_check_smartarray_is_the_check_command(tmp_path):
    """The packages link check_smartarray to the program; run by that name, it is ``check``
    (here a link to this environment's console script, as the packages make one to theirs)."""
    link = tmp_path / "check_smartarray"
    link.symlink_to(Path(sys.executable).with_name("smartarray-agent"))
    env = {k: v for k, v in os.environ.items() if k != "SMARTARRAY_SIM_FAULTS"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(link), *args], capture_output=True, text=True, env=env,
                              timeout=60)

    ok = run("-w", "10:", "-c", "5", "--simulate", "gen9-battery")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("SMARTARRAY OK - ")
    assert run("--simulate", "failed-battery").returncode == 2
    usage = run("status")
    assert usage.returncode == 3 and usage.stdout.startswith("SMARTARRAY UNKNOWN - usage: ")
