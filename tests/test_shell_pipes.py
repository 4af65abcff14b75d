"""Shell scripts that set pipefail never end a pipe with a reader that may stop early.

Under ``set -o pipefail`` a pipe such as ``fetch | grep -q PATTERN`` fails whenever grep finds
its line before the writer has finished: the writer dies of SIGPIPE (or Python's
BrokenPipeError) and the pipe's status is the writer's, not grep's. Whether that happens depends
on the size of the output and on scheduling, so it fails now and then (CI of stop 19: "the CLI's
change to the shared simulator does not show in /metrics" while the line was there). Read the
whole output into a variable first, or use ``grep -c``, ``find -quit``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*CHECKOUT.glob("packaging/**/*.sh"), CHECKOUT / ".ci" / "run"])
EARLY_READER = re.compile(r"\|\s*(grep\s+(-\w*q\w*|--quiet)\b|head\b)")


def _sets_pipefail(text: str) -> bool:
    return re.search(r"^\s*set\s+-[a-z]*o\s+pipefail", text, re.M) is not None


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(CHECKOUT)))
def test_no_pipe_ends_in_a_reader_that_stops_early(script: Path) -> None:
    text = script.read_text()
    if not _sets_pipefail(text):
        return
    offending = [f"{script.name}:{number}: {line.strip()}"
                 for number, line in enumerate(text.splitlines(), 1)
                 if not line.lstrip().startswith("#") and EARLY_READER.search(line)]
    assert not offending, "\n".join(offending)


def test_the_race_the_rule_prevents_is_real() -> None:
    """The writer outlives grep -q's match and the pipe fails, though the line is there."""
    writer = ("import sys\nprint('wanted', flush=True)\n"
              "for _ in range(2_000):\n    sys.stdout.write('x' * 100_000 + '\\n')")
    result = subprocess.run(["bash", "-c", 'set -o pipefail; "$0" -c "$1" | grep -q wanted',
                             sys.executable, writer],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "BrokenPipeError" in result.stderr
