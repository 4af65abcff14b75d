"""docs/status.schema.json is the status contract's JSON Schema, made from the model, and
what ``status --json`` prints validates against it: every bundled scenario, every real
capture."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from smartarray_agent.common.model import Snapshot
from smartarray_agent.simulator import list_scenarios

from .agent_cli import agent
from .captures import needs_captures, real_files
from .model_reader import SCHEMA_FILE, STATUS_SCHEMA


def status_json(*args: str) -> dict:
    result = agent("status", "--json", *args)
    data = json.loads(result.stdout)
    if result.returncode == 2 and "controllers" not in data:  # text that is no CLI output
        pytest.skip(data["error"]["message"])
    assert result.returncode in (0, 1), result.stderr  # 1: the output is an Error: answer
    return data


def test_the_schema_file_is_current():
    schema = Snapshot.model_json_schema(mode="serialization")
    schema["title"] = "smartarray-agent status --json"
    made = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("SMARTARRAY_UPDATE_GOLDEN"):
        SCHEMA_FILE.write_text(made)
    assert SCHEMA_FILE.read_text() == made, (
        "docs/status.schema.json is out of date: if intended, regenerate with "
        "SMARTARRAY_UPDATE_GOLDEN=1 and review the diff")


@pytest.mark.parametrize("name", [name for name, _ in list_scenarios()])
def test_every_scenario_validates(tmp_path, monkeypatch, name):
    monkeypatch.setenv("SMARTARRAY_SIM_STATE_DIR", str(tmp_path))
    STATUS_SCHEMA.validate(status_json("--simulate", name))


@needs_captures
@pytest.mark.parametrize("path", real_files(), ids=lambda path: path.name)
def test_every_real_capture_validates(path):
    STATUS_SCHEMA.validate(status_json("--input", str(path)))


def test_the_schema_refuses_what_the_contract_does_not_allow():
    with pytest.raises(jsonschema.ValidationError):
        STATUS_SCHEMA.validate({"controllers": [{"model": "P420", "colour": "blue"}]})
    with pytest.raises(jsonschema.ValidationError):
        STATUS_SCHEMA.validate({"controllers": [{"model": "P420",
                                             "backup_power": {"charge_percent": "99"}}]})


def test_the_ansible_facts_module_documents_every_key_of_the_contract():
    import yaml

    from smartarray_agent.common.model import Snapshot

    module = (Path(__file__).resolve().parents[1] / "packaging" / "ansible" /
              "ansible_collections" / "smartarray" / "agent" / "plugins" / "modules" /
              "facts.py").read_text()
    returned = yaml.safe_load(module.split('RETURN = r"""', 1)[1].split('"""', 1)[0])
    documented = returned["ansible_facts"]["contains"]["smartarray_agent"]["contains"]
    assert set(documented) == {"agent_version", *Snapshot.model_fields}
