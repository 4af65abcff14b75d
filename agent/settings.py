"""Settings an operator writes, declared as frozen dataclasses and built from plain data (a
parsed TOML or YAML file) by one small validator.

A field's type says what it accepts, strictly: ``bool`` is true or false; ``float`` a finite
number, not a bool (an integer is stored as a float); ``str`` a string; ``Path`` a string,
stored as a Path; ``Literal[...]`` one of its values; ``X | None`` a null too (YAML); a
dataclass a table of its own fields; ``dict[str, X]`` a table of any keys. Rules ride on
the type, declared once per field::

    timeout_s: Annotated[float, Range(gt=0, le=3600)] = 120.0
    simulate: Annotated[str | None, Check(known_scenario)] = None

A :class:`Check` returns the value to keep (it may normalise it) or raises ValueError with
the problem. A settings class may define ``cross_check(self)``, called once its own fields
are valid, for rules between fields: it raises :class:`Invalid` naming the field, or any
ValueError about the table as a whole. Building a dataclass directly (or
``dataclasses.replace``) checks nothing: values from code are trusted, values from a file
go through :func:`build`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard, TypeVar

Location = tuple[str, ...]
Problem = tuple[Location, str]  # the key path, and what is wrong with its value
T = TypeVar("T")


class Invalid(ValueError):
    """What a ``cross_check`` finds wrong with ``key`` of its table."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class SettingsError(ValueError):
    """Data that does not fit the settings class; ``problems`` in the order found (fields in
    their declared order, a table's own problems after its fields')."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(f"{'.'.join(where) or '(top level)'}: {what}"
                                   for where, what in problems))
        self.problems = problems


@dataclasses.dataclass(frozen=True, slots=True)
class Range:
    """Bounds of a number: greater than ``gt``, at least ``ge``, less than ``lt``, at most
    ``le``."""

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def apply(self, value: float) -> float:
        for name, holds, words in _BOUNDS:
            bound = getattr(self, name)
            if bound is not None and not holds(value, bound):
                raise ValueError(f"must be {words} {_number(bound)} (got {_number(value)})")
        return value


_BOUNDS = (("gt", operator.gt, "greater than"), ("ge", operator.ge, "at least"),
           ("lt", operator.lt, "less than"), ("le", operator.le, "at most"))


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    """A rule of one value: ``function`` returns the value to keep, or raises ValueError."""

    function: Callable[[Any], Any]

    def apply(self, value: Any) -> Any:
        return self.function(value)


def build(schema: type[T], data: object) -> T:
    """An instance of the dataclass ``schema`` from ``data``, or SettingsError listing every
    problem, each located by its key path."""
    problems: list[Problem] = []
    built = _convert(schema, data, (), problems)
    if problems:
        raise SettingsError(problems)
    return typing.cast(T, built)


class _Refused:
    """The value could not be used; its problem is already listed."""


_REFUSED = _Refused()


def _convert(hint: Any, value: object, where: Location, problems: list[Problem]) -> Any:
    origin = typing.get_origin(hint)
    if origin is Annotated:
        inner, *rules = typing.get_args(hint)
        converted = _convert(inner, value, where, problems)
        if converted is _REFUSED or converted is None:
            return converted
        try:
            for rule in rules:
                converted = rule.apply(converted)
        except ValueError as error:
            problems.append((where, str(error)))
            return _REFUSED
        return converted
    if origin in (types.UnionType, typing.Union):
        (inner,) = (member for member in typing.get_args(hint) if member is not type(None))
        return None if value is None else _convert(inner, value, where, problems)
    if dataclasses.is_dataclass(hint):
        return _build(typing.cast(type, hint), value, where, problems)
    if origin is dict:
        return _table(typing.get_args(hint)[1], value, where, problems)
    problem = _scalar_problem(hint, origin, value)
    if problem is not None:
        problems.append((where, f"{problem} (got {_shown(value)})"))
        return _REFUSED
    if hint is float:
        return float(typing.cast(float, value))
    return Path(typing.cast(str, value)) if hint is Path else value


def _scalar_problem(hint: Any, origin: Any, value: object) -> str | None:
    """Why ``value`` is not a ``hint``, or None."""
    if origin is Literal:
        choices = typing.get_args(hint)
        if any(type(value) is type(choice) and value == choice for choice in choices):
            return None
        return "must be one of " + ", ".join(repr(choice) for choice in choices)
    if hint is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return "must be a number"
        try:
            return None if math.isfinite(value) else "must be a finite number"
        except OverflowError:  # an integer too large for a float
            return "must be a finite number"
    expected = {bool: (bool, "must be true or false"), str: (str, "must be a string"),
                Path: (str, "must be a string naming a path")}.get(hint)
    if expected is None:
        raise TypeError(f"settings of type {hint!r} are not supported")
    return None if isinstance(value, expected[0]) else expected[1]


def _build(schema: type, value: object, where: Location, problems: list[Problem]) -> object:
    if not _is_table(value, where, problems):
        return _REFUSED
    found = len(problems)
    fields = _fields(schema)
    given: dict[str, object] = {}
    for name, (hint, required) in fields.items():
        if name in value:
            given[name] = _convert(hint, value[name], (*where, name), problems)
        elif required:
            problems.append(((*where, name), "required but not given"))
    problems += [((*where, str(key)), "unknown key") for key in value if key not in fields]
    if len(problems) > found:
        return _REFUSED
    built = schema(**given)
    cross_check = getattr(built, "cross_check", None)
    try:
        if cross_check is not None:
            cross_check()
    except Invalid as error:
        problems.append(((*where, error.key), str(error)))
        return _REFUSED
    except ValueError as error:
        problems.append((where, str(error)))
        return _REFUSED
    return built


def _table(hint: Any, value: object, where: Location, problems: list[Problem]) -> object:
    """A ``dict[str, hint]``: any keys, each value a ``hint``."""
    if not _is_table(value, where, problems):
        return _REFUSED
    found = len(problems)
    table = {}
    for key, item in value.items():
        if not isinstance(key, str):
            problems.append(((*where, str(key)), "the key must be a string"))
            continue
        table[key] = _convert(hint, item, (*where, key), problems)
    return table if len(problems) == found else _REFUSED


def _is_table(value: object, where: Location, problems: list[Problem]
              ) -> TypeGuard[dict[Any, Any]]:
    """Whether ``value`` is a table (a dict); if not, its problem is listed."""
    if isinstance(value, dict):
        return True
    problems.append((where, f"must be a table of keys (got {_shown(value)})"))
    return False


@functools.cache
def _fields(schema: type) -> dict[str, tuple[Any, bool]]:
    """Each field's type (its rules included) and whether the data must give it."""
    hints = typing.get_type_hints(schema, include_extras=True)
    return {field.name: (hints[field.name], field.default is dataclasses.MISSING
                         and field.default_factory is dataclasses.MISSING)
            for field in dataclasses.fields(schema)}


def _number(value: float) -> str:
    """``value`` as short as it reads back: 3600, 0.5, 1e+300."""
    if isinstance(value, int):
        digits = str(abs(value))
        return str(value) if len(digits) <= 20 else f"an integer of {len(digits)} digits"
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def _shown(value: object) -> str:
    """``value`` as a settings file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)
