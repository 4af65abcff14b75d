"""Read a TOML or YAML settings file into plain data, and say where each key is written.

Validation errors then read ``file:line: key: problem``, the form ``config check`` prints
and editors jump to. Neither tomllib nor yaml's plain loader keeps positions, so
:class:`Document` carries a key path -> line map built from the text (TOML) or from the
YAML node tree.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ValidationError

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")


class ConfigError(ValueError):
    """A settings file that cannot be used; ``problems`` are ``file:line: key: problem``."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Document:
    path: Path
    data: dict
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line_of(self, location: tuple[str, ...]) -> int:
        """The line of ``location`` or of its nearest written parent; 1 when none is."""
        for end in range(len(location), 0, -1):
            line = self.lines.get(location[:end])
            if line is not None:
                return line
        return 1

    def problem(self, location: tuple[str, ...], message: str) -> str:
        key = ".".join(location) or "(top level)"
        return f"{self.path}:{self.line_of(location)}: {key}: {message}"


def read_document(path: Path) -> Document:
    """Parse ``path`` as YAML when it ends in ``.yml``/``.yaml``, TOML otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: no such file"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{path}:1: not UTF-8 text"]) from None
    except OSError as error:
        raise ConfigError([f"{path}: {error.strerror or error}"]) from None
    if path.suffix.lower() in (".yml", ".yaml"):
        return _yaml_document(path, text)
    return _toml_document(path, text)


def validate(document: Document, model: type[BaseModel]) -> BaseModel:
    """``model`` built from the document, or a ConfigError naming each bad key's line."""
    try:
        return model.model_validate(document.data)
    except ValidationError as error:
        found = []
        for item in error.errors():
            location = tuple(str(part) for part in item["loc"])
            message = "unknown key" if item["type"] == "extra_forbidden" else item["msg"]
            found.append((document.line_of(location),
                          document.problem(location, message.removeprefix("Value error, "))))
        # In the file's order, as an editor shows it (pydantic reports by field).
        raise ConfigError([problem for _, problem in sorted(found, key=lambda f: f[0])]) \
            from None


def _toml_document(path: Path, text: str) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _TOML_LINE.search(message)
        line = match.group(1) if match else "1"
        problem = _TOML_LINE.sub("", message).strip()
        raise ConfigError([f"{path}:{line}: not valid TOML: {problem}"]) from None
    return Document(path, data, _toml_lines(text))


def _toml_lines(text: str) -> dict[tuple[str, ...], int]:
    """Key path -> line for table headers and ``key = value`` lines. Lines inside
    multi-line strings or arrays may be taken for keys; they only ever add entries that
    no validation error names."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = _split_key(header.group(1))
            for end in range(1, len(table) + 1):
                lines.setdefault(table[:end], number)
            continue
        key = _KEY.match(line)
        if key:
            lines.setdefault(table + _split_key(key.group(1)), number)
    return lines


def _split_key(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def _yaml_document(path: Path, text: str) -> Document:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError([f"{path}:{line}: not valid YAML: {problem}"]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError([f"{path}:1: (top level): expected a mapping of settings"])
    lines: dict[tuple[str, ...], int] = {}
    _yaml_lines(node, (), lines)
    return Document(path, data, lines)


def _yaml_lines(node, prefix: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        location = (*prefix, str(key.value))
        lines.setdefault(location, key.start_mark.line + 1)
        _yaml_lines(value, location, lines)
