"""Record: the simulator's small data classes, without dataclasses.

A simulator process starts for every vendor command the agent and the tests run; importing
``dataclasses`` (it imports ``inspect``, ``ast``, ``dis``...) and generating each class's
methods cost such a start ~20 ms, a quarter of it. A Record's methods are shared instead.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes it as True; importing typing costs a start ~15 ms
if TYPE_CHECKING:
    from typing import Any


class Record:
    """Fields are the class's annotated names, in order (``fields``); a class attribute of
    the same name is the field's default (a list default is copied for each instance).
    Built from positional values and keywords; equal when of one class with equal values.
    Setting a name that is not a field raises AttributeError, and any name at all when the
    class is declared ``frozen=True``."""

    fields: tuple[str, ...] = ()
    frozen: bool = False

    def __init_subclass__(cls, frozen: bool = False) -> None:
        cls.fields = tuple(cls.__dict__.get("__annotations__", {}))
        cls.frozen = frozen

    def __init__(self, *args: Any, **values: Any) -> None:
        if len(args) > len(self.fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(self.fields)} values")
        given = dict(zip(self.fields, args, strict=False))
        if given.keys() & values.keys():
            raise TypeError(f"{type(self).__name__}: {sorted(given.keys() & values.keys())} "
                            "given twice")
        given.update(values)
        for name in self.fields:
            if name not in given and hasattr(type(self), name):
                default = getattr(type(self), name)
                given[name] = list(default) if isinstance(default, list) else default
        if given.keys() != set(self.fields):
            wrong = sorted(given.keys() ^ set(self.fields))
            raise TypeError(f"{type(self).__name__}: missing or unknown fields {wrong}")
        self.__dict__.update((name, given[name]) for name in self.fields)

    def __setattr__(self, name: str, value: object) -> None:
        if self.frozen or name not in self.fields:
            raise AttributeError(f"cannot set {type(self).__name__}.{name}")
        super().__setattr__(name, value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        if not self.frozen:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash((type(self), *vars(self).values()))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"{type(self).__name__}({values})"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` made."""
        return type(self)(**{**vars(self), **changes})
