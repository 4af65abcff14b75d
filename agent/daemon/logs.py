"""Logging to stderr, with a syslog priority for journald under systemd (docs/agent.md)."""

from __future__ import annotations

import logging
import os
import sys

_PRIORITY = {
    logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6,
    logging.DEBUG: 7,
}


class _JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        priority = _PRIORITY.get(record.levelno, 6)
        text = super().format(record)
        return "\n".join(f"<{priority}>{line}" for line in text.splitlines())


def setup_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("JOURNAL_STREAM"):
        handler.setFormatter(_JournalFormatter("%(message)s"))
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
