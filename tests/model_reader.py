"""A strict reader of the ``status --json`` contract back into the model, for the tests:
every key must be a field and every value of its declared type (pydantic's strict mode).
The product only writes the JSON; this is how the tests hold the writer to the model."""

from __future__ import annotations

from smartarray_agent.common.model import Snapshot


def read_snapshot(text: str) -> Snapshot:
    return Snapshot.model_validate_json(text, strict=True)
