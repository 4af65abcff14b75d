"""The status model is plain records (record.py): reading a capture never imports pydantic
nor compiles dataclass methods (#13: commands start fast), and what pydantic's validation
gave (no unknown attribute, every value of its declared type) still holds."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.model import Cache, Snapshot, to_json

from .captures import needs_captures, real_files
from .imports import modules_after, pydantic_in
from .model_reader import read_snapshot

# The model, the parser and what reads the model without the configuration or the iLO
READERS = ("smartarray_agent.model", "smartarray_agent.collectors.ssacli.parser",
           "smartarray_agent.collectors.ssacli.collector",
           "smartarray_agent.collectors.ssacli.metrics", "smartarray_agent.cli.table",
           "smartarray_agent.cli.plugin", "smartarray_agent.policy", "smartarray_agent.charge",
           "smartarray_agent.write.kinds", "smartarray_agent.write.guard",
           "smartarray_agent.write.change")
IMPORT_ARGS = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
"""


def test_the_model_the_parser_and_their_readers_import_without_pydantic():
    modules = modules_after(IMPORT_ARGS, *READERS)
    assert set(READERS) <= modules
    assert not pydantic_in(modules)


def test_the_model_and_the_parser_compile_no_dataclass_and_import_no_typing():
    # dataclass compiles each class's methods at import, about 1 ms a class, and imports
    # inspect; typing costs a start some 5 ms: the parser needs neither
    modules = modules_after(IMPORT_ARGS, "smartarray_agent.model",
                            "smartarray_agent.collectors.ssacli.parser")
    assert "smartarray_agent.collectors.ssacli.scan" in modules
    assert not {"dataclasses", "inspect", "typing"} & modules


def test_a_misspelt_attribute_is_refused():
    cache = Cache()
    with pytest.raises(AttributeError):
        cache.read_precent = 25  # type: ignore[attr-defined]


@needs_captures
@pytest.mark.parametrize("path", real_files(), ids=lambda path: path.name)
def test_every_value_parsed_from_a_capture_has_its_declared_type(path):
    try:
        snapshot = parse(path.read_text(errors="replace"))
    except ParseError:
        pytest.skip("not CLI output: the parser refuses it")
    # read_snapshot refuses a value of another type (an int in a float field included)
    assert read_snapshot(to_json(snapshot)) == snapshot


def test_an_int_in_a_float_field_is_refused_by_the_reader():
    assert read_snapshot(to_json(Snapshot())) == Snapshot()
    with pytest.raises(TypeError, match="charge_percent"):
        read_snapshot('{"controllers": [{"model": "P420", "backup_power": '
                      '{"charge_percent": 5}}]}')


def test_the_json_is_utf8_text_not_ascii_escapes():
    snapshot = Snapshot(notices=["Température élevée"])
    assert '"Température élevée"' in to_json(snapshot)
