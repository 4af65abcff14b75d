"""A strict reader of the ``status --json`` contract back into the model, for the tests:
every key must be a field, every value of the field's declared type (an int where a float is
declared is refused, as JSON writes ``5`` for 5 and ``5.0`` for 5.0). The product only
writes the JSON; this is how the tests hold the writer to the model's types."""

from __future__ import annotations

import json
import types
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from smartarray_agent.model import Snapshot
from smartarray_agent.record import Record

T = TypeVar("T")


def read_snapshot(text: str) -> Snapshot:
    return read(Snapshot, json.loads(text), "snapshot")


def read(cls: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise TypeError(f"{where}: expected an object for {cls.__name__}, got {data!r}")
    hints = get_type_hints(cls)
    unknown = set(data) - set(cls.fields)  # type: ignore[attr-defined]
    if unknown:
        raise TypeError(f"{where}: unknown keys {sorted(unknown)}")
    return cls(**{name: _value(hints[name], value, f"{where}.{name}")
                  for name, value in data.items()})


def _value(kind: Any, value: Any, where: str) -> Any:
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in get_args(kind):
            return None
        (kind,) = (arg for arg in get_args(kind) if arg is not type(None))
        origin = get_origin(kind)
    if isinstance(kind, type) and issubclass(kind, Record):
        return read(kind, value, where)  # type: ignore[arg-type]
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise TypeError(f"{where}: expected an array, got {value!r}")
        args = get_args(kind)
        if origin is list:
            return [_value(args[0], item, f"{where}[{n}]") for n, item in enumerate(value)]
        if len(value) != len(args):
            raise TypeError(f"{where}: expected {len(args)} items, got {value!r}")
        return tuple(_value(arg, item, f"{where}[{n}]")
                     for n, (arg, item) in enumerate(zip(args, value, strict=True)))
    if type(value) is not kind:
        raise TypeError(f"{where}: expected {kind.__name__}, got {value!r}")
    return value
