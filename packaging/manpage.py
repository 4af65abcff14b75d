"""Write smartarray-agent(8) in roff: the hand-written text of ``smartarray-agent.8.in`` with the
commands, their options and the exit codes generated from the program itself (the help of
every command of its Typer app), so the manual cannot fall behind ``--help``.

    python packaging/manpage.py [OUT]      (default: standard output)

Run it with the interpreter the agent is installed in (stage.sh uses the package's venv).
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from smartarray_agent.cli import app, exitcodes
from smartarray_agent.cli.options import PROG

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


def _term(name: str, argument: bool) -> str:
    """A parameter as --help names it (``-t, --timeout SECONDS``), in roff: the options
    bold, the value or argument italic."""
    if argument:
        return f"\\fI{roff(name)}\\fR"
    words = name.split(" ")
    options = [word.rstrip(",") for word in words if word.startswith("-")]
    value = " ".join(word for word in words if not word.startswith("-"))
    bold = ", ".join(f"\\fB{roff(option)}\\fR" for option in options)
    return f"{bold} \\fI{roff(value)}\\fR" if value else bold


def _command(path: list[str], command: TyperCommand) -> list[str]:
    ctx = typer.Context(command, info_name=" ".join([PROG, *path]))
    usage = " ".join(command.collect_usage_pieces(ctx))
    out = [f".SS {roff(' '.join([*path, usage]))}"]
    for paragraph in (command.help or "").split("\n\n"):
        out += [roff(" ".join(paragraph.split())), ".PP"]
    out.pop()
    for param in command.params:
        record = param.get_help_record(ctx)
        if record is not None:
            name, text = record
            out += [".TP", _term(name, isinstance(param, TyperArgument)),
                    roff(" ".join(text.split())) or "\\&"]
    return out


def commands(group: TyperGroup | None = None,
             path: tuple[str, ...] = ()) -> Iterator[tuple[list[str], TyperCommand]]:
    """Every command of the app with the words that name it, in ``--help``'s order."""
    group = group or typer.main.get_command(app.app)
    assert isinstance(group, TyperGroup)
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            yield from commands(command, (*path, name))
        else:
            assert isinstance(command, TyperCommand), name
            yield [*path, name], command


def commands_section() -> str:
    lines = []
    for path, command in sorted(commands(), key=lambda item: item[0]):
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
