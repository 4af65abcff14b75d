"""What a fresh interpreter has imported: the start-up tests' one probe (#13: commands
start fast, and reading a capture or a configuration never imports pydantic)."""

from __future__ import annotations

import subprocess
import sys

_LIST = "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))\n"


def modules_after(code: str, *args: str) -> set[str]:
    """The modules loaded once ``code`` has run in a new interpreter, ``args`` its
    ``sys.argv[1:]``; the code must succeed."""
    done = subprocess.run([sys.executable, "-c", code + _LIST, *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def pydantic_in(modules: set[str]) -> set[str]:
    """pydantic's modules among ``modules``, pydantic_core's included."""
    return {m for m in modules if m.startswith("pydantic")}
