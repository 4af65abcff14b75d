"""The collector of the audit log's unfinished changes (docs/metrics.md, "Unfinished
changes"): it reads the file only, writes nothing and runs no vendor command."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.core import Metric

from smartarray_agent.collectors.base import CollectionError, Collector
from smartarray_agent.collectors.families import Families
from smartarray_agent.write.audit import AuditError
from smartarray_agent.write.history import UnfinishedChange, unfinished

HELP = {
    "smartarray_unfinished_changes":
        "Changes whose audit intent has no outcome and could not be reconciled yet (their "
        "controller could not be read); a new change to such a controller is refused.",
    "smartarray_unfinished_change_info":
        "One per unfinished change: its audit record id, controller and kind; always 1.",
}


class AuditCollector(Collector[tuple[UnfinishedChange, ...]]):
    name = "audit"
    interval_s: float | None = None
    HELP = HELP

    def __init__(self, path: Path) -> None:
        self.path = path

    def collect(self) -> tuple[UnfinishedChange, ...]:
        try:
            return tuple(unfinished(self.path))
        except AuditError as error:
            raise CollectionError(str(error)) from None

    def families(self, data: tuple[UnfinishedChange, ...], now: float) -> list[Metric]:
        out = Families(HELP)
        out.gauge("smartarray_unfinished_changes", {}, float(len(data)))
        for change in data:
            slot, serial = change.controller.get("slot"), change.controller.get("serial")
            out.gauge("smartarray_unfinished_change_info", {
                "controller": str(slot) if slot is not None else f"sn:{serial}",
                "id": change.ident, "kind": str((change.record.get("requested") or {})
                                                .get("kind", "")),
            }, 1.0)
        return out.metrics()

    def summary(self, data: tuple[UnfinishedChange, ...]) -> str:
        return f"{len(data)} unfinished change" + ("" if len(data) == 1 else "s")
