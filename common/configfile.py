"""Read a TOML or YAML settings file, and say each problem as ``file:line: key: problem``
(docs/agent.md, "config check"): :class:`Document` maps key paths to lines, which neither
tomllib nor yaml keeps."""

from __future__ import annotations

import difflib
import os
import re
import reprlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
)

from smartarray_agent.common.files import read_regular_file
from smartarray_agent.common.trust import ANY_ACCESS_BY_OTHERS, distrust, distrusted_entry

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")
MAX_BYTES = 2**20
T = TypeVar("T", bound=BaseModel)


class Settings(BaseModel):
    """A table: strict types (``"30"`` and ``true`` are not numbers), finite numbers, unknown
    keys refused; frozen (code copies with ``model_copy(update=...)``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


def _beside_the_file(path: Path, info: ValidationInfo) -> Path:
    """A relative path is relative to the directory of the file that names it."""
    base = (info.context or {}).get("base")
    return path if base is None else base / path


# A path is written as a string (strict mode would take only a Path object).
FilePath = Annotated[Path, Field(strict=False), AfterValidator(_beside_the_file)]


class ConfigError(ValueError):  # problems: "file:line: key: problem"

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Document:
    path: Path
    data: dict
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line_of(self, location: tuple[str, ...]) -> int:
        """The line of ``location`` or of its nearest written parent, else 1."""
        return next((self.lines[location[:end]] for end in range(len(location), 0, -1)
                     if location[:end] in self.lines), 1)

    def problem(self, location: tuple[str, ...], message: str) -> str:
        key = ".".join(location) or "(top level)"
        return f"{self.path}:{self.line_of(location)}: {key}: {message}"


def read_document(path: Path) -> Document:
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError([f"{path}:1: not UTF-8 text"]) from None
    try:
        if path.suffix.lower() in (".yml", ".yaml"):
            document = _yaml_document(path, text)
        else:
            document = _toml_document(path, text)
    except RecursionError:  # "x = [[[[...": 100,000 brackets
        raise ConfigError([f"{path}:1: nested too deep"]) from None
    return document


def _read_bytes(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES that root may trust."""
    try:
        info, data = read_regular_file(path, MAX_BYTES)
    except FileNotFoundError:
        raise ConfigError([f"{path}: no such file"]) from None
    except OSError as error:
        raise ConfigError([f"{path}: {error.strerror or error}"]) from None
    if data is None:
        raise ConfigError([f"{path}: not a regular file (a directory, FIFO, socket or device "
                           "is refused)"])
    problem = trust_problem(path, info) if os.geteuid() == 0 else None
    if problem is not None:
        raise ConfigError([f"{path}: refused: {problem}"])
    if len(data) > MAX_BYTES:
        raise ConfigError([f"{path}: larger than {MAX_BYTES // 1024} KiB"])
    return data


def trust_problem(path: Path, opened: os.stat_result | None = None) -> str | None:
    """Why root must not act on ``path`` (run it, read it, write beside it), or None: it
    (``opened``: the descriptor read) and every directory above it, as written and resolved,
    must be root's and writable by no one else (a higher sticky one, like /tmp, may be)."""
    try:
        found = distrusted_entry(path, owners=(0,), trusted_gid=0, opened=opened)
    except OSError as error:
        return f"cannot check {error.filename}: {error.strerror or error}"
    if found is None:
        return None
    entry, why = found
    return f"{why.describe(entry)}: only root may be able to change what root reads and runs"


def credentials_directory() -> Path | None:  # systemd's LoadCredential= directory
    directory = os.environ.get("CREDENTIALS_DIRECTORY")
    return Path(directory) if directory else None


def handed_over(path: Path) -> Path:
    """``path``'s name in the credentials directory when the unit hands it over there, else
    ``path`` (the unprivileged ``serve`` cannot read root's files where they lie)."""
    directory = credentials_directory()
    if directory is not None and (directory / path.name).is_file():
        return directory / path.name
    return path


def secret_problem(path: Path) -> str | None:
    """Why ``path`` may not hold a secret (credentials, a private key, password hashes), or
    None: it must be root's (or the reader's) and no one else's to read, unless it is in the
    credentials directory."""
    if Path(os.path.abspath(path)).parent == credentials_directory():
        return None
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None  # reading it says so
    except OSError as error:
        return f"cannot check {path}: {error.strerror or error}"
    found = distrust(info, kind="file", owners=(0, os.geteuid()), forbidden=ANY_ACCESS_BY_OTHERS)
    if found is None:
        return None
    if found.what == "owner":
        return f"{path} holds a secret and belongs to uid {found.uid} (chown root: {path})"
    if found.what == "mode":
        return (f"{path} holds a secret and its group or others may read it (mode "
                f"{found.mode:04o}; chmod 600 {path})")
    return f"{path} is not a regular file"


def named_paths(model: BaseModel, location: tuple[str, ...] = ()
                ) -> Iterator[tuple[tuple[str, ...], Path]]:
    """Every path a validated settings model holds, with its key: a walk of the model, so
    that no path field is left out of a check."""
    for name, value in model:
        where = (*location, name)
        if isinstance(value, Path):
            yield where, value
        elif isinstance(value, BaseModel):
            yield from named_paths(value, where)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, BaseModel):
                    yield from named_paths(item, (*where, str(key)))


def refuse_untrusted(document: Document,
                     named: Iterable[tuple[tuple[str, ...], Path | None]]) -> None:
    """ConfigError naming each key whose file (None: not set) root must not act on."""
    problems = [document.problem(location, f"refused: {problem}") for location, path in named
                if path is not None and (problem := trust_problem(path)) is not None]
    if problems:
        raise ConfigError(problems)


def validate(document: Document, schema: type[T]) -> T:
    """``schema`` built from the document, or a ConfigError: each bad key in the file's order.
    A :data:`FilePath` is resolved against the document's directory."""
    try:
        return schema.model_validate(document.data, context={"base": document.path.parent})
    except ValidationError as error:
        found = sorted(((_location(e["loc"]), _unknown(schema, e) or _problem(e))
                        for e in error.errors()),
                       key=lambda problem: document.line_of(problem[0]))
        raise ConfigError([document.problem(*problem) for problem in found]) from None


def _unknown(schema: type[BaseModel], error: Any) -> str | None:
    """``unknown section (did you mean [policy]?)``, or ``unknown key``, for a key the schema
    does not have."""
    if error["type"] != "extra_forbidden":
        return None
    *parents, name = _location(error["loc"])
    model: Any = schema
    for parent in parents:
        field = _fields_of(model).get(parent)
        model = field.annotation if field is not None else None
    known = list(_fields_of(model))
    table = isinstance(error.get("input"), dict)
    what = "unknown section" if table and not parents else "unknown key"
    close = difflib.get_close_matches(name, known, n=1)
    if not close:
        return what
    return f"{what} (did you mean {f'[{close[0]}]' if table and not parents else close[0]}?)"


def _fields_of(model: Any) -> dict[str, Any]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return dict(model.model_fields)
    return {}


def _location(loc: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(str(part) for part in loc if part != "[key]")


def _problem(error: Any) -> str:
    """pydantic's message with the value it was given: ``Input should be less than or equal to
    100 (got 100.5)``; a validator's own words as they are."""
    if error["type"] == "missing":
        return "required but not given"
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    # pydantic's path message names Python's class, which differs by version (pathlib._local)
    message = "Input should be a path" if error["type"] == "path_type" else error["msg"]
    # reprlib: a value nested a thousand deep, or of 4000 digits, shown short and not a crash
    return f"{message} (got {reprlib.repr(error.get('input'))})"


def _toml_document(path: Path, text: str) -> Document:
    import tomllib  # here: a command without a configuration file never needs it

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _TOML_LINE.search(message)
        line = match.group(1) if match else "1"
        problem = _TOML_LINE.sub("", message).strip()
        raise ConfigError([f"{path}:{line}: not valid TOML: {problem}"]) from None
    except ValueError as error:
        raise _unreadable_value(path, "TOML", error) from None
    return Document(path, data, _toml_lines(text))


def _toml_lines(text: str) -> dict[tuple[str, ...], int]:
    """Key path -> line of table headers and ``key = value`` lines (a line in a multi-line
    string may be taken for a key: an entry no error names)."""
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


def _unreadable_value(path: Path, kind: str, error: ValueError) -> ConfigError:
    """A value the parser cannot make (a 4301-digit integer), reported without a line."""
    return ConfigError([f"{path}: not valid {kind}: {str(error).split(';')[0]}"])


def _yaml_document(path: Path, text: str) -> Document:
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:  # refuse an alias where it is
            if self.check_event(yaml.AliasEvent):
                line = self.peek_event().start_mark.line + 1
                raise ConfigError([f"{path}:{line}: YAML aliases (*name) are not accepted: "
                                   "write the value out"])
            return super().compose_node(parent, index)

    loader = Loader(text)
    try:
        node = loader.get_single_node()
        data = {} if node is None else loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError([f"{path}:{line}: not valid YAML: {problem}"]) from None
    except ConfigError:
        raise
    except ValueError as error:
        raise _unreadable_value(path, "YAML", error) from None
    finally:
        loader.dispose()
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
