"""Write smartarray-agent(8) in roff: the hand-written text of ``smartarray-agent.8.in`` with the
commands, their options and the exit codes generated from the program itself (the argparse
parser of every command), so the manual cannot fall behind ``--help``.

    python packaging/manpage.py [OUT]      (default: standard output)

Run it with the interpreter the agent is installed in (stage.sh uses the package's venv).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import os
import sys
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from smartarray_agent import cli
from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.command import Command

TEMPLATE = Path(__file__).with_name("smartarray-agent.8.in")


def roff(text: str) -> str:
    """Plain text as roff body text: backslashes and hyphens escaped, no line starting a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _synopsis(action: argparse.Action) -> str:
    """An option's names and its value, or an argument's metavar, in roff."""
    metavar = str(action.metavar or action.dest.upper())
    if not action.option_strings:
        return f"\\fI{roff(metavar)}\\fR" + ("..." if action.nargs == "*" else "")
    names = ", ".join(f"\\fB{roff(option)}\\fR" for option in action.option_strings)
    return names if action.nargs == 0 else f"{names} \\fI{roff(metavar)}\\fR"


def _usage(action: argparse.Action) -> str:
    optional = (not action.required if action.option_strings
                else action.nargs in ("?", "*"))
    return f"[{_synopsis(action)}]" if optional else _synopsis(action)


def _help(action: argparse.Action, prog: str) -> str:
    """Its help as --help shows it (argparse's %(default)s and the like expanded)."""
    text = (action.help or "") % {**vars(action), "prog": prog}
    return roff(" ".join(text.split()))


def _command(path: list[str], command: Command) -> list[str]:
    prog = " ".join([cli.PROG, *path])
    actions = [action for action in command.parser(prog)._actions
               if action.help != argparse.SUPPRESS and action.dest != "help"]
    usage = " ".join(_usage(action) for action in actions)
    out = [f".SS {roff(' '.join(path))} {usage}".rstrip()]
    for paragraph in command.help.split("\n\n"):
        out += [roff(" ".join(paragraph.split())), ".PP"]
    out.pop()
    for action in actions:
        out += [".TP", _synopsis(action), _help(action, prog) or "\\&"]
    return out


def commands_section() -> str:
    lines = []
    for path, command in sorted(cli.APP.walk(), key=lambda item: item[0]):
        lines += _command(path, command)
    return "\n".join(lines)


def exit_codes_section() -> str:
    """``NAME = N  # meaning`` lines of agent/cli/exitcodes.py as a roff list."""
    source = inspect.getsource(exitcodes)
    comments = {}
    for number, line in enumerate(source.splitlines(), start=1):
        if "#" in line:
            comments[number] = line.split("#", 1)[1].strip()
    lines = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            meaning = comments.get(node.lineno, "success" if node.value.value == 0 else "")
            lines += [".TP", f"\\fB{node.value.value}\\fR", roff(meaning)]
    return "\n".join(lines)


def render() -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    # Reproducible builds set SOURCE_DATE_EPOCH; otherwise the page carries the build day.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    stamp = when.strftime("%Y-%m-%d")
    replacements = {
        "@VERSION@": version("smartarray-agent"),
        "@DATE@": stamp,
        "@COMMANDS@": commands_section(),
        "@EXIT_CODES@": exit_codes_section(),
    }
    for key, value in replacements.items():
        text = text.replace(key, value)
    return text


def main() -> None:
    page = render()
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
