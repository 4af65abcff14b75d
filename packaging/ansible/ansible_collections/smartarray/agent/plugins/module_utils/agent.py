# Copyright: smartarray-agent contributors
# Apache License 2.0 (see LICENSE)
"""Run the ``smartarray-agent`` CLI for the collection's modules: find it, call it with an
argument list (never a shell), read its JSON. The agent makes every vendor-CLI call and
reads its output; nothing in this collection parses vendor output."""

from __future__ import annotations

import json
import os

from ansible.module_utils.basic import AnsibleModule, env_fallback

PACKAGED_EXECUTABLE = "/opt/smartarray-agent/bin/smartarray-agent"
CONFIG_ENV = "SMARTARRAY_AGENT_CONFIG"

# The options every module of the collection takes.
COMMON_OPTIONS = {
    "executable": {"type": "path"},
    "simulate": {"type": "str"},
    "config": {"type": "path", "fallback": (env_fallback, [CONFIG_ENV])},
}


class Answer:
    """One run of the agent: its exit code, its JSON (None when stdout held none) and the
    one-line message it gave."""

    def __init__(self, rc: int, stdout: str, stderr: str) -> None:
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.data = _json_or_none(stdout)

    @property
    def message(self) -> str:
        """The agent's message: the JSON's, else its standard error without the prefix."""
        if isinstance(self.data, dict) and self.data.get("message"):
            return str(self.data["message"])
        prefix = "smartarray-agent: "
        lines = [line[len(prefix):] if line.startswith(prefix) else line
                 for line in self.stderr.splitlines() if line.strip()]
        return "\n".join(lines) or f"smartarray-agent exited with {self.rc} and said nothing"


def find_executable(module: AnsibleModule) -> str:
    """``executable``, else ``smartarray-agent`` on PATH, else the packaged one."""
    given = module.params["executable"]
    if given:
        return str(given)
    found = module.get_bin_path("smartarray-agent")
    if found:
        return str(found)
    if os.access(PACKAGED_EXECUTABLE, os.X_OK):
        return PACKAGED_EXECUTABLE
    module.fail_json(msg="smartarray-agent is neither on PATH nor at "
                         f"{PACKAGED_EXECUTABLE}: install it (role "
                         "smartarray.agent.smartarray_agent) "
                         "or set executable")
    raise AssertionError("fail_json exits")  # for type checkers


def source_arguments(module: AnsibleModule) -> list[str]:
    """The configuration file and simulator scenario options, as the module was given them."""
    arguments = []
    if module.params["config"]:
        arguments += ["--config", str(module.params["config"])]
    if module.params["simulate"]:
        arguments += ["--simulate", str(module.params["simulate"])]
    return arguments


def run_agent(module: AnsibleModule, arguments: list[str]) -> Answer:
    """Run the agent with ``arguments`` (a list: no shell) and return what it answered."""
    rc, stdout, stderr = module.run_command([find_executable(module), *arguments],
                                            environ_update={"LC_ALL": "C.UTF-8"})
    return Answer(rc, stdout, stderr)


def agent_version(module: AnsibleModule) -> str:
    """The agent's version (``smartarray-agent --version`` prints ``smartarray-agent X``)."""
    answer = run_agent(module, ["--version"])
    if answer.rc != 0 or not answer.stdout.strip():
        module.fail_json(msg=f"smartarray-agent --version failed: {answer.message}",
                         rc=answer.rc)
    return answer.stdout.split()[-1]


def _json_or_none(text: str) -> object:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
