"""Write smartarray-agent(8) in roff: the hand-written text of ``smartarray-agent.8.in`` with the
commands, their options and the exit codes generated from the program itself, so the manual
cannot fall behind ``--help``.

    python packaging/manpage.py [OUT]      (default: standard output)

Run it with the interpreter the agent is installed in (stage.sh uses the package's venv).
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import click

from smartarray_agent import cli
from smartarray_agent.cli import exitcodes

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


def _paragraphs(text: str | None) -> list[str]:
    if not text:
        return []
    text = inspect.cleandoc(text).split("\f")[0]
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


# Commands and parameters are read by their attributes, not by class.
def _is_option(param) -> bool:
    return param.param_type_name == "option"


def _metavar(param, command) -> str:
    if param.metavar:
        return param.metavar
    try:
        shown = param.display_type(click.Context(command))
    except (AttributeError, TypeError):
        shown = getattr(getattr(param, "type", None), "name", None)
    return str(shown or "value").strip("<>").upper()


def _option_synopsis(param, command) -> str:
    if not _is_option(param):
        return f"\\fI{roff(param.metavar or param.name.upper())}\\fR"
    names = ", ".join(f"\\fB{roff(o)}\\fR" for o in [*param.opts, *param.secondary_opts])
    if param.is_flag or param.count:
        return names
    return f"{names} \\fI{roff(_metavar(param, command))}\\fR"


def _option_help(param) -> str:
    text = getattr(param, "help", None) or ""
    if _is_option(param) and not param.is_flag and param.show_default is not False:
        default = param.default
        if default is not None and not callable(default) and default != () and default != "":
            text = f"{text} Default: {default}."
    return roff(" ".join(text.split()))


def _command(path: list[str], command) -> list[str]:
    out = []
    if getattr(command, "commands", None):
        for name in sorted(command.commands):
            sub = command.commands[name]
            if not sub.hidden:
                out += _command([*path, name], sub)
        return out
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    usage = " ".join(
        f"[{_option_synopsis(p, command)}]" if _is_option(p) and not p.required
        else _option_synopsis(p, command)
        for p in params
    )
    out.append(f".SS {roff(' '.join(path))} {usage}".rstrip())
    for paragraph in _paragraphs(command.help):
        out += [roff(paragraph), ".PP"]
    if out[-1] == ".PP":
        out.pop()
    for param in params:
        if param.name == "help":
            continue
        out += [".TP", _option_synopsis(param, command), _option_help(param) or "\\&"]
    return out


def commands_section() -> str:
    group = cli.loaded_group()
    lines = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if not command.hidden:
            lines += _command([name], command)
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
