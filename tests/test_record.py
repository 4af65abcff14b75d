"""Records (record.py): what the status model, the parser and the simulator keep of a
dataclass, without compiling methods at import."""

from __future__ import annotations

import copy
import pickle

import pytest

from smartarray_agent.record import Record, as_dict, field


class Part(Record, kw_only=True):
    size: int | None = None


class Whole(Record, kw_only=True):
    name: str
    parts: list[Part] = field(default_factory=list)
    part: Part = field(default_factory=Part)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    note: str | None = None


class Point(Record, frozen=True):
    x: int
    y: int = 0


def test_arguments_have_defaults_and_fresh_factories():
    first, second = Whole(name="a"), Whole(name="b", note="n")
    first.parts.append(Part(size=1))
    assert (second.name, second.note, second.parts, second.part) == ("b", "n", [], Part())
    assert first.part is not second.part
    assert Whole.fields == ("name", "parts", "part", "pairs", "note")


def test_positional_arguments_follow_the_fields_unless_keywords_only():
    assert Point(1, y=2) == Point(x=1, y=2) != Point(1)
    with pytest.raises(TypeError, match="positional"):
        Whole("a")  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        Point(1, 2, 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'x' twice"):
        Point(1, x=2)  # type: ignore[misc]


def test_a_missing_or_unknown_argument_is_refused_by_name():
    with pytest.raises(TypeError, match="Whole\\(\\) is missing the argument 'name'"):
        Whole()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected arguments: 'nmae'"):
        Whole(name="a", nmae="b")  # type: ignore[call-arg]


def test_an_attribute_that_is_not_a_field_is_refused():
    whole = Whole(name="a")
    with pytest.raises(AttributeError):
        whole.notes = "x"  # type: ignore[attr-defined]


def test_a_frozen_record_refuses_every_assignment_and_is_hashable():
    point = Point(1)
    with pytest.raises(AttributeError, match="frozen"):
        point.x = 2  # type: ignore[misc]
    assert {Point(1), Point(1, 0)} == {point}
    with pytest.raises(TypeError, match="unhashable"):
        hash(Part())


def test_records_compare_field_by_field():
    assert Whole(name="a", parts=[Part(size=1)]) == Whole(name="a", parts=[Part(size=1)])
    assert Whole(name="a", parts=[Part(size=1)]) != Whole(name="a", parts=[Part(size=2)])
    assert Part(size=None) != Whole(name="a")


def test_the_repr_names_every_field():
    assert repr(Point(3)) == "Point(x=3, y=0)"
    assert repr(Whole(name="a")) == ("Whole(name='a', parts=[], part=Part(size=None), "
                                     "pairs=[], note=None)")


def test_replace_makes_a_changed_copy():
    assert Point(1).replace(y=5) == Point(1, 5)
    with pytest.raises(TypeError, match="unexpected"):
        Point(1).replace(z=5)


def test_as_dict_converts_what_a_record_holds_in_field_order():
    whole = Whole(name="a", parts=[Part(size=1)], pairs=[("Status", "OK")])
    data = as_dict(whole)
    assert list(data) == list(Whole.fields)
    assert data == {"name": "a", "parts": [{"size": 1}], "part": {"size": None},
                    "pairs": [("Status", "OK")], "note": None}
    data["parts"].append("x")
    assert len(whole.parts) == 1  # a copy, not the record's list


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r))])
def test_a_deep_copy_or_a_pickle_is_equal_and_shares_nothing(duplicate):
    whole = Whole(name="a", parts=[Part(size=1)])
    twin = duplicate(whole)
    assert twin == whole
    twin.parts[0].size = 2
    assert whole.parts[0].size == 1
    assert duplicate(Point(1, 2)) == Point(1, 2)  # frozen too


def test_fields_are_declared_in_one_class_and_not_named_like_a_method():
    with pytest.raises(TypeError, match="one class"):
        type("Bigger", (Whole,), {"__annotations__": {"extra": "int"}})
    with pytest.raises(TypeError, match="cannot be fields"):
        type("Odd", (Record,), {"__annotations__": {"replace": "int"}})
