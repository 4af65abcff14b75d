"""The git commit the agent was built from (``smartarray_build_info{revision}``): the
``_revision.py`` packaging/stage.sh writes into a package, else ``unknown``, never an
error (docs/metrics.md)."""

from __future__ import annotations

import importlib
from functools import cache

UNKNOWN = "unknown"


@cache
def revision() -> str:
    try:
        stamped = importlib.import_module("smartarray_agent._revision")
    except ImportError:
        return UNKNOWN
    return str(stamped.REVISION)
