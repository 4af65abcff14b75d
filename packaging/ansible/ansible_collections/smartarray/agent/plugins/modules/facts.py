#!/usr/bin/python
# Copyright: smartarray-agent contributors
# Apache License 2.0 (see LICENSE)
"""The Smart Array status contract (``smartarray-agent status --json``) as Ansible facts."""

from __future__ import annotations

DOCUMENTATION = r"""
module: facts
short_description: Smart Array controllers, cache and backup power as facts
version_added: "0.1.0"
description:
  - Runs C(smartarray-agent status --json) and returns its status contract (every
    controller's cache, write-cache switches, backup power, logical and physical drives) as
    the fact C(smartarray_agent), with the agent's version.
  - Fields the vendor CLI did not show are V(null), never a guess.
author:
  - smartarray-agent contributors (@smartarray-agent)
requirements:
  - smartarray-agent on the managed host
extends_documentation_fragment:
  - smartarray.agent.agent
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Changes nothing.
  facts:
    support: full
    description: Sets C(ansible_facts.smartarray_agent).
"""

EXAMPLES = r"""
- name: Read the Smart Arrays
  smartarray.agent.facts:

- name: Hosts whose backup power is not ok
  ansible.builtin.debug:
    msg: "{{ item.model }}: {{ item.backup_power.status }}"
  loop: "{{ ansible_facts.smartarray_agent.controllers }}"
  when: item.backup_power.status != 'ok'
"""

RETURN = r"""
ansible_facts:
  description: The facts.
  returned: always
  type: dict
  contains:
    smartarray_agent:
      description:
        - The status contract of C(status --json) plus the agent's version. Its JSON Schema
          is docs/status.schema.json in the agent's repository (the model's own, made by
          its tests/test_status_schema.py).
      type: dict
      contains:
        agent_version:
          description: The agent's version.
          type: str
          sample: 0.1.0
        controllers:
          description: One entry per controller (slot, model, serial, cache,
            backup_power, logical_drives, physical_drives, ...); C(Controller) in the schema.
          type: list
          elements: dict
        unassigned_batteries:
          description: Batteries the iLO lists that Redfish ties to no controller (index,
            model, serial, status, charge_percent); C(IloBattery) in the schema. Read from
            the iLO alone (C(status --ilo)); never a controller's backup power.
          type: list
          elements: dict
        error:
          description: The vendor CLI's error, when it answered with one; else null.
          type: dict
        cli_version:
          description: The vendor CLI's version, where it printed one.
          type: str
        notices:
          description: Warnings about the output as a whole (a truncated capture, the iLO).
          type: list
          elements: str
        unparsed_lines:
          description: Lines of the output that no rule read, kept so nothing is lost.
          type: list
          elements: str
"""

# Imports come after the documentation blocks, the layout ansible-doc and ansible-test expect.
from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.smartarray.agent.plugins.module_utils.agent import (  # noqa: E402
    COMMON_OPTIONS,
    agent_version,
    run_agent,
    source_arguments,
)


def main() -> None:
    module = AnsibleModule(argument_spec=dict(COMMON_OPTIONS), supports_check_mode=True)
    answer = run_agent(module, ["status", "--json", *source_arguments(module)])
    if answer.rc != 0 or not isinstance(answer.data, dict):
        module.fail_json(msg=f"smartarray-agent status failed: {answer.message}",
                         rc=answer.rc)
    facts = dict(answer.data)
    facts["agent_version"] = agent_version(module)
    module.exit_json(changed=False, ansible_facts={"smartarray_agent": facts})


if __name__ == "__main__":
    main()
