"""Every command loads the configuration: reading and validating it must not cost the
import of pydantic (#13: commands start fast), whose models stay for the simulator's
scenarios and the iLO's JSON."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent.parent / "packaging" / "config.toml"

# Loads the packaged configuration as a command does, then prints the modules loaded.
PROBE = """
import sys
from pathlib import Path
from smartarray_agent.cli.context import CommandContext
from smartarray_agent.config import Overrides
CommandContext.load(Path(sys.argv[1]), Overrides(timeout_s=30, listen_address=":9100"))
print("\\n".join(sorted(sys.modules)))
"""


def test_loading_the_configuration_imports_no_pydantic():
    done = subprocess.run([sys.executable, "-c", PROBE, str(PACKAGED)], capture_output=True,
                          text=True, timeout=60, check=True)
    modules = set(done.stdout.split())
    assert {"smartarray_agent.config", "smartarray_agent.cli.context"} <= modules
    assert not {m for m in modules if m.startswith("pydantic")}
