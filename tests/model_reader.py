"""A strict reader of the ``status --json`` contract back into the model, for the tests:
every key must be a field and every value of its declared type (pydantic's strict mode).
The product only writes the JSON; this is how the tests hold the writer to the model. And
the contract's JSON Schema as its readers take it, docs/status.schema.json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from smartarray_agent.common.model import Snapshot

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "status.schema.json"
# One validator of the checked schema (jsonschema.validate() checks the schema itself again
# at every call, which costs more than the instance's validation).
STATUS_SCHEMA = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))


def read_snapshot(text: str) -> Snapshot:
    return Snapshot.model_validate_json(text, strict=True)
