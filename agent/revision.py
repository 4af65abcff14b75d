"""The git commit the agent was built from (``smartarray_build_info{revision}``): a package's
``_revision.py`` (packaging/stage.sh writes it), else a source checkout's HEAD, else
``unknown``, never an error."""

from __future__ import annotations

import importlib
import subprocess
from functools import cache
from pathlib import Path

UNKNOWN = "unknown"
GIT_TIMEOUT_S = 5.0


@cache
def revision() -> str:
    try:
        stamped = importlib.import_module("smartarray_agent._revision")
    except ImportError:
        return checkout_head(Path(__file__).resolve().parent.parent)
    return str(stamped.REVISION)


def checkout_head(root: Path) -> str:
    if not (root / "pyproject.toml").is_file():  # an installed copy, in site-packages
        return UNKNOWN
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "HEAD"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):  # no git
        return UNKNOWN
    head = done.stdout.strip()
    return head if done.returncode == 0 and head else UNKNOWN
