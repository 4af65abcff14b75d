"""Records: typed data classes declared like dataclasses, that cost nothing to define.

``dataclasses.dataclass`` writes the ``__init__``, ``__repr__`` and ``__eq__`` of each class
as source text and compiles it every time its module is imported, about 1 ms a class, and
imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``...). The status model, the parser
and the simulator define some 40 classes, and a command that reads a capture, or a
simulated CLI run, starts for each use (#13, docs/benchmarks.md). A record class is made in
microseconds: one ``__init__``, ``__repr__`` and ``__eq__``, here, serve every record,
reading the fields from the class; and this module imports nothing.

A record's fields are its class's annotated names, in order (``cls.fields``); a class
attribute of the same name is the field's default, ``field(default_factory=...)`` one made
for each record. Declared ``class C(Record, kw_only=True)``, it takes keywords only;
``frozen=True``, it refuses every assignment after ``__init__`` and is hashable (otherwise
records are not). Records have ``__slots__`` (setting a name that is not a field raises
AttributeError), compare equal when of one class with equal fields, and have a repr naming
every field and :meth:`Record.replace`. mypy sees all of it through ``dataclass_transform``.
Fields are declared in one class, not inherited.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes it as True; importing typing costs a start about 6 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:
    def dataclass_transform(**_: object) -> object:
        return lambda cls: cls

_RESERVED = {"fields", "replace", "frozen", "kw_only"}


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is made anew for each record (a new list, a new block)."""
    return _Factory(default_factory)  # type: ignore[return-value]  # read by Record.__init__


@dataclass_transform(field_specifiers=(field,))
class _RecordClass(type):
    """Makes a record class: its annotated names become its fields and its slots."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                frozen: bool = False, kw_only: bool = False) -> Any:
        names = tuple(namespace.get("__annotations__", ()))
        if any(getattr(base, "fields", ()) for base in bases):
            raise TypeError(f"{name}: a record declares its fields in one class")
        if _RESERVED & set(names):
            raise TypeError(f"{name}: {sorted(_RESERVED & set(names))} cannot be fields")
        defaults = {name: namespace.pop(name) for name in names if name in namespace}
        namespace.update(
            __slots__=names, fields=names, frozen=frozen, kw_only=kw_only,
            _known=frozenset(names),
            _required=tuple(name for name in names if name not in defaults),
            _constants=tuple((name, value) for name, value in defaults.items()
                             if type(value) is not _Factory),
            _factories=tuple((name, value.make) for name, value in defaults.items()
                             if type(value) is _Factory))
        if frozen:
            namespace["__setattr__"] = _refuse_assignment
        return super().__new__(mcs, name, bases, namespace)


def _refuse_assignment(record: object, name: str, value: object) -> None:
    raise AttributeError(f"cannot set {type(record).__name__}.{name}: it is frozen")


class Record(metaclass=_RecordClass):
    __slots__ = ()
    if TYPE_CHECKING:  # set by _RecordClass
        fields: ClassVar[tuple[str, ...]]
        frozen: ClassVar[bool]
        kw_only: ClassVar[bool]
        _known: ClassVar[frozenset[str]]
        _required: ClassVar[tuple[str, ...]]
        _constants: ClassVar[tuple[tuple[str, Any], ...]]
        _factories: ClassVar[tuple[tuple[str, Callable[[], Any]], ...]]

    def __init__(self, *args: Any, **values: Any) -> None:
        # The parser makes a record for every drive it reads: the defaults are set first,
        # then what is given, each loop as short as it can be.
        kind = type(self)
        if args:
            if kind.kw_only or len(args) > len(kind.fields):
                raise TypeError(f"{kind.__name__}() takes {len(args)} positional arguments: "
                                f"{'none' if kind.kw_only else f'at most {len(kind.fields)}'}")
            for name, value in zip(kind.fields, args, strict=False):
                if values.setdefault(name, value) is not value:
                    raise TypeError(f"{kind.__name__}() got {name!r} twice")
        if not values.keys() <= kind._known:
            raise TypeError(f"{kind.__name__}() got unexpected arguments: "
                            + ", ".join(repr(name) for name in values if name not in kind._known))
        for name in kind._required:
            if name not in values:
                raise TypeError(f"{kind.__name__}() is missing the argument {name!r}")
        set_field = object.__setattr__
        for name, value in kind._constants:
            set_field(self, name, value)
        for name, make in kind._factories:
            if name not in values:
                set_field(self, name, make())
        for name, value in values.items():
            set_field(self, name, value)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.fields)

    def __hash__(self) -> int:
        if not self.frozen:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash((type(self), *(getattr(self, name) for name in self.fields)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.fields)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        """For copy and pickle: the class and the values (a frozen record refuses the
        attribute-by-attribute restore of a slotted object)."""
        return _restore, (type(self), tuple(getattr(self, name) for name in self.fields))

    def replace(self: _T, **changes: Any) -> _T:
        """A copy with ``changes`` made."""
        record: Any = self
        return type(self)(**{**{name: getattr(record, name) for name in record.fields},
                             **changes})


def _restore(kind: type[Record], values: tuple[Any, ...]) -> Record:
    record = kind.__new__(kind)
    for name, value in zip(kind.fields, values, strict=True):
        object.__setattr__(record, name, value)
    return record


def as_dict(record: Record) -> dict[str, Any]:
    """The record as a dict, field by field in declaration order, with the records, lists,
    tuples and dicts it holds converted too (a tuple stays a tuple)."""
    return {name: _plain(getattr(record, name)) for name in record.fields}


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return as_dict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
