"""Reconciling unfinished changes (write/history.py finds them). A change holds the host lock
from its intent to its outcome, so an intent still open when someone else holds the lock is
a change that was killed between the two; whoever next holds the lock reconciles it, or
leaves it open while its controller cannot be read (docs/cli.md, "Unfinished changes").
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from smartarray_agent.collectors.ssacli.errors import SsacliError
from smartarray_agent.common.model import Snapshot
from smartarray_agent.write.audit import AuditError, AuditLog
from smartarray_agent.write.history import UnfinishedChange, unfinished
from smartarray_agent.write.kinds import BadRequest, settings

log = logging.getLogger(__name__)


def reconcile(audit: AuditLog, read: Callable[[UnfinishedChange], Snapshot]
              ) -> tuple[list[str], list[UnfinishedChange]]:
    """Reconcile every unfinished change of ``audit``'s file; the caller holds the host lock.
    ``read`` gives the controllers as they are now, with a change's among them (it may raise
    the runner's errors, or BadRequest). Returns what was reconciled (a message a change,
    for the caller to say on stderr or in the daemon's log; the record's syslog copy puts it
    in the journal too) and the changes left open (their controller could not be read, or
    the record could not be written). Raises AuditError when the log cannot be read."""
    done: list[str] = []
    still_open: list[UnfinishedChange] = []
    for change in unfinished(audit.path):
        try:
            ctrl = change.target.find(read(change))
        except (SsacliError, BadRequest) as error:
            log.warning("unfinished change %s: could not read the controller: %s",
                        change.describe(), error)
            still_open.append(change)
            continue
        asked = change.change()
        shows = asked.entry.shows(ctrl, asked) if asked is not None else None
        after = settings(ctrl)
        state = {True: "in effect", False: "not in effect", None: "not shown"}[shows]
        message = (f"unfinished change reconciled: {change.describe()} never recorded its "
                   f"outcome; {ctrl.name} now shows {_shown(after)}: the change is {state}")
        record = {key: change.record.get(key) for key in (
            "controller", "requested", "before", "command", "backup_power",
            "threshold_percent", "charge_percent", "charge_read_at")}
        try:
            audit.record({"id": change.ident, "event": "outcome", "outcome": "reconciled",
                          "verdict": None, **record, "after": after, "in_effect": shows,
                          "asked_at": change.record.get("time"),
                          "asked_by": change.record.get("user"), "message": message})
        except AuditError as error:
            log.error("unfinished change %s: could not record its reconciliation: %s",
                      change.describe(), error)
            still_open.append(change)
            continue
        done.append(message)
    return done, still_open


def _shown(settings: dict) -> str:
    """``cache_ratio=10/90 no_battery_write_cache=on ...``: the settings a change records,
    for a person (switches on/off, per logical drive ``1:on``; what was not shown left out)."""
    def word(value: object) -> str:
        return "on" if value is True else "off" if value is False else str(value)

    parts = []
    for key, value in settings.items():
        if isinstance(value, dict):
            value = ",".join(f"{name}:{word(v)}" for name, v in value.items()) or None
        if value is not None:
            parts.append(f"{key}={word(value)}")
    return " ".join(parts) or "none of the settings a change records"
