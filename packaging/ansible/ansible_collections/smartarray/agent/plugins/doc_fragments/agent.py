# Copyright: smartarray-agent contributors
# Apache License 2.0 (see LICENSE)
"""The options every module of the collection takes (module_utils/agent.py COMMON_OPTIONS)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  executable:
    description:
      - The agent. Default C(smartarray-agent) on PATH, then
        C(/opt/smartarray-agent/bin/smartarray-agent).
    type: path
  simulate:
    description:
      - A bundled simulator scenario (V(gen9-battery), V(unsafe-nbwc),
        V(two-controllers), ...) instead of the vendor CLI, for demos and tests.
    type: str
  config:
    description:
      - The agent's configuration file (default the agent's,
        C(/etc/smartarray-agent/config.toml) when it exists). With C([redfish]), the
        iLO's battery charge is read too.
      - Taken from the environment variable E(SMARTARRAY_AGENT_CONFIG) when not given.
    type: path
"""
