#!/usr/bin/python
# Copyright: smartarray-agent contributors
# Apache License 2.0 (see LICENSE)
"""Set a Smart Array's cache ratio and write-cache switches through smartarray-agent."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cache
short_description: Set a Smart Array controller's cache ratio and write-cache switches
version_added: "0.1.0"
description:
  - Sets the read/write cache ratio, no-battery write cache, drive write cache and a logical
    drive's caching of HP/HPE Smart Array controllers, through the C(smartarray-agent) CLI
    (C(set-cache-ratio) and C(write-cache) with C(--json)).
  - The agent reads the controller, judges the change with its write-cache interlock, writes
    the audit intent, sends the vendor command, reads the controller again and records the
    outcome. This module never runs or parses the vendor CLI itself.
  - Turning write cache on while backup power is below the threshold is refused by the
    agent; the task then fails with the agent's message (naming the controller, its backup
    power state and the threshold) and its exit code in C(rc). Nothing is sent.
  - Turning write cache on needs no prompt here (the task is the confirmation), but the
    interlock still judges it.
  - Several settings in one task are applied in this order on each controller; switches
    turned off first, then the cache ratio, then switches turned on. A failure stops the
    remaining settings of that controller; other controllers go on.
  - Each setting is one run of the agent, which starts the vendor CLI once for it (twice
    when a read fails); with O(all), one run changes every controller, in one vendor CLI
    session.
author:
  - smartarray-agent contributors (@smartarray-agent)
requirements:
  - smartarray-agent on the managed host (the role
    P(smartarray.agent.smartarray_agent#role) installs it)
options:
  slot:
    description:
      - The controller's slot, as C(smartarray-agent status) shows it (V(0), V(3), V(0b)).
      - Exactly one of O(slot), O(serial) and O(all) names the controllers.
    type: str
  serial:
    description:
      - The controller's serial number.
    type: str
  all:
    description:
      - Every controller of the host whose cache is present (or whose cache presence is
        unknown, which the agent then refuses or fails; unknown is never taken as safe).
        Controllers that report no cache module are listed in RV(skipped).
    type: bool
  ratio:
    description:
      - The read/write cache ratio, C(READ/WRITE) percentages that sum to 100, for example
        V(25/75). The controller must accept it.
    type: str
  no_battery_write_cache:
    description:
      - Whether write cache stays on without healthy backup power
        (C(nobatterywritecache)). V(true) is refused below the threshold.
    type: bool
  drive_write_cache:
    description:
      - The physical drives' own write cache. V(true) is refused below the threshold.
    type: bool
  usage:
    description:
      - On Gen10 controllers, which drives O(drive_write_cache) applies to.
    type: str
    choices: [configured, unconfigured, hba]
  logical_drive:
    description:
      - The logical drive whose caching O(caching) sets, as C(status) numbers it.
    type: str
  caching:
    description:
      - The caching (array accelerator) of O(logical_drive).
    type: bool
  threshold_percent:
    description:
      - Backup power charge below which write cache may not be forced on, a number from 0
        to 100 (C(nan) and C(inf) are refused). Default the agent's
        C([policy] battery_threshold_percent) (80).
    type: float
extends_documentation_fragment:
  - smartarray.agent.agent
attributes:
  check_mode:
    support: full
    description: Runs the agent with C(--dry-run), which judges the change and reports the
      command it would send, and sends nothing.
  diff_mode:
    support: full
    description: One diff per controller, before and after (predicted in check mode).
notes:
  - A second run with the same options reports no change; the agent sends
    nothing for a setting the controller already shows.
  - In check mode each setting is judged against the controller as it is, not as the
    previous setting of the same task would leave it.
"""

EXAMPLES = r"""
- name: Cache ratio 25/75 on the controller in slot 0
  smartarray.agent.cache:
    slot: "0"
    ratio: "25/75"

- name: No forced write cache anywhere (always allowed)
  smartarray.agent.cache:
    all: true
    no_battery_write_cache: false

- name: Gen10, drive write cache off for configured drives
  smartarray.agent.cache:
    serial: PEYHN0ARH9W01K
    drive_write_cache: false
    usage: configured

- name: Caching on for logical drive 2
  smartarray.agent.cache:
    slot: "0"
    logical_drive: "2"
    caching: true
"""

RETURN = r"""
controllers:
  description: One entry per controller the task addressed.
  returned: always
  type: list
  elements: dict
  contains:
    slot:
      description: The controller's slot.
      type: str
      sample: "0"
    serial:
      description: The controller's serial number.
      type: str
      sample: PSIM9P440AR001
    model:
      description: The controller's model.
      type: str
      sample: Smart Array P440ar
    changed:
      description: Whether anything was changed (or, in check mode, would be).
      type: bool
    failed:
      description: Whether a setting was refused, not applied or failed on this controller.
      type: bool
    before:
      description: The settings before the task, as the agent read them.
      type: dict
      sample: {"cache_ratio": "10/90", "no_battery_write_cache": false}
    after:
      description: The settings after the task (predicted in check mode).
      type: dict
      sample: {"cache_ratio": "25/75", "no_battery_write_cache": false}
    commands:
      description: The exact vendor CLI arguments sent (would be sent, in check mode).
      type: list
      elements: list
      sample: [["ctrl", "slot=0", "modify", "cacheratio=25/75"]]
    audit:
      description: The agent's audit record of each setting (its outcome and file), where
        the agent reports one; V(null) entries where it does not.
      type: list
      elements: dict
    results:
      description: The agent's JSON outcome of each setting, unchanged (verdict, message,
        requested, before, after, command, controller).
      type: list
      elements: dict
skipped:
  description: With O(all), the controllers left out because they report no cache module.
  returned: always
  type: list
  elements: dict
rc:
  description: The agent's exit code of the first failed setting (4 refused, 5 not applied,
    6 declined, 8 sent with an unknown outcome, 12 outcome not in the audit file, 1 vendor
    error, 2 bad input, 3 no CLI).
  returned: failure
  type: int
  sample: 4
"""

# Imports come after the documentation blocks, the layout ansible-doc and ansible-test expect.
import math  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.smartarray.agent.plugins.module_utils.agent import (  # noqa: E402
    COMMON_OPTIONS,
    run_agent,
    source_arguments,
)

# Exit code of a write that was sent but whose outcome could not be read back.
SENT_OUTCOME_UNKNOWN = 8
# Verdicts as the agent spells them, hyphens read as underscores ("dry-run" and "dry_run").
SUCCESSFUL_VERDICTS = ("changed", "unchanged", "dry_run")
# Verdicts under which the outcome's command was not sent (newer agents name the command
# they would have sent in these too).
NOT_SENT_VERDICTS = ("unchanged", "refused", "declined", "not_sent", "bad_request")


class Setting:
    """One change the task asks for: the agent arguments that make it, and where its value
    shows in the agent's settings dict (to predict ``after`` in check mode)."""

    def __init__(self, arguments: list[str], path: list[str], value: object,
                 turns_off: bool = False, turns_on: bool = False) -> None:
        self.arguments = arguments
        self.path = path
        self.value = value
        # Order: switches off first, then the ratio, then switches on.
        self.order = 0 if turns_off else 2 if turns_on else 1

    def predict(self, settings: dict) -> dict:
        """``settings`` with this change made."""
        result = dict(settings)
        node = result
        for key in self.path[:-1]:
            inner = node.get(key)
            if not isinstance(inner, dict):
                return result
            node[key] = dict(inner)
            node = node[key]
        node[self.path[-1]] = self.value
        return result


def wanted_settings(params: dict) -> list[Setting]:
    wanted = []
    if params["ratio"] is not None:
        wanted.append(Setting(["set-cache-ratio", params["ratio"]], ["cache_ratio"],
                              params["ratio"].strip()))
    if params["no_battery_write_cache"] is not None:
        wanted.append(_switch(["--what", "no-battery"], ["no_battery_write_cache"],
                              params["no_battery_write_cache"]))
    if params["drive_write_cache"] is not None:
        enable, usage = params["drive_write_cache"], params["usage"]
        if usage is None:
            wanted.append(_switch(["--what", "drive"], ["drive_write_cache"], enable))
        else:
            wanted.append(_switch(["--what", "drive", "--usage", usage],
                                  ["drive_write_cache_policy", usage], enable,
                                  "enable" if enable else "disable"))
    if params["logical_drive"] is not None:
        drive = params["logical_drive"]
        wanted.append(_switch(["--what", "logical-drive", drive],
                              ["logical_drive_caching", drive], params["caching"]))
    return sorted(wanted, key=lambda setting: setting.order)


def _switch(what: list[str], path: list[str], enable: bool, shown: object = None) -> Setting:
    arguments = ["write-cache", "enable" if enable else "disable", *what, "--yes"]
    return Setting(arguments, path, enable if shown is None else shown,
                   turns_off=not enable, turns_on=enable)


def target_of(module: AnsibleModule) -> list[str]:
    """The ``--slot`` or ``--serial`` arguments of the one controller the task names."""
    params = module.params
    if params["slot"] is not None:
        return ["--slot", params["slot"]]
    return ["--serial", params["serial"]]


class ControllerReport:
    """What the task did to one controller, built from the agent's outcome objects."""

    def __init__(self, outcome: dict) -> None:
        identity = outcome.get("controller") or {}
        self.slot = identity.get("slot")
        self.serial = identity.get("serial")
        self.model = identity.get("model")
        self.before = outcome.get("before")
        self.after = outcome.get("before")
        self.changed = False
        self.failure: tuple[int, str] | None = None
        self.commands: list[list[str]] = []
        self.audit: list[object] = []
        self.results: list[dict] = []

    def add(self, outcome: dict, setting: Setting, rc: int | None, check_mode: bool) -> None:
        """Take one outcome in; ``rc`` is the agent's exit code when the answer held only
        this outcome (None for one of ``--all``'s results, judged by its verdict)."""
        self.results.append(outcome)
        self.audit.append(outcome.get("audit"))
        verdict = str(outcome.get("verdict")).replace("-", "_")
        if outcome.get("command") and verdict not in NOT_SENT_VERDICTS:
            self.commands.append(list(outcome["command"]))
        after = outcome.get("after")
        unknown = rc == SENT_OUTCOME_UNKNOWN or verdict == "unknown"  # sent, not read back
        changed = bool(outcome.get("changed")) or unknown
        if check_mode and verdict == "dry_run":
            changed = True
            after = setting.predict(self.after or {})
        elif after is not None and self.after is not None and after != self.after:
            changed = True
        self.changed = self.changed or changed
        if after is not None:
            self.after = after
        elif unknown:
            self.after = None  # nobody knows what the controller shows now
        failed = verdict not in SUCCESSFUL_VERDICTS if rc is None else rc != 0
        if failed and self.failure is None:
            self.failure = (rc if rc is not None else 1,
                            str(outcome.get("message") or verdict))

    def target(self) -> list[str]:
        """The agent's arguments that name this controller."""
        return (["--slot", str(self.slot)] if self.slot is not None
                else ["--serial", str(self.serial)])

    def as_dict(self) -> dict:
        return {"slot": self.slot, "serial": self.serial, "model": self.model,
                "changed": self.changed, "failed": self.failure is not None,
                "before": self.before, "after": self.after, "commands": self.commands,
                "audit": self.audit, "results": self.results}

    def diff(self) -> dict:
        header = f"{self.model} in slot {self.slot}, serial {self.serial}"
        return {"before_header": header, "after_header": header,
                "before": self.before or {}, "after": self.after or {}}


def outcomes(data: object) -> list[dict]:
    """The outcome objects of one agent answer: one object, or ``--all``'s ``results``."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("results"), list):
        return [item for item in data["results"] if isinstance(item, dict)]
    return [data]


class Task:
    """The agent runs of one task and what they reported, by controller."""

    def __init__(self, module: AnsibleModule, extra: list[str]) -> None:
        self.module = module
        self.extra = extra
        self.reports: dict[tuple, ControllerReport] = {}
        self.unreported: list[tuple[int, str]] = []  # runs that answered no JSON

    def one_controller(self, target: list[str], settings: list[Setting]) -> None:
        """``settings`` on the controller ``target`` names, one agent run each, stopping at
        the first that fails."""
        for setting in settings:
            answer = run_agent(self.module, [*setting.arguments, *target, *self.extra])
            found = outcomes(answer.data)
            if not found:  # no JSON: bad input, no CLI, a vendor error before any judgement
                self.unreported.append((answer.rc, f"{' '.join(target)}: {answer.message}"))
                return
            for outcome in found:
                self._take(outcome, setting, answer.rc)
            if answer.rc != 0:
                return

    def every_controller(self, settings: list[Setting]) -> list[dict]:
        """``settings`` on every controller with a cache, one ``--all`` run each (one vendor
        CLI session); once a controller fails, its remaining settings stop and the other
        controllers' go on one run each. The controllers the agent left out (no cache)."""
        skipped: list[dict] = []
        for index, setting in enumerate(settings):
            answer = run_agent(self.module, [*setting.arguments, "--all", *self.extra])
            found = outcomes(answer.data)
            if not isinstance(answer.data, dict) or "results" not in answer.data:
                self.unreported.append((answer.rc, f"--all: {answer.message}"))
                return skipped
            skipped = [item for item in answer.data.get("skipped") or []
                       if isinstance(item, dict)]
            reports = [self._take(outcome, setting, None) for outcome in found]
            if not reports and not self.reports:
                self.module.fail_json(msg="no controller with a cache on this host",
                                      rc=answer.rc, skipped=skipped)
            if answer.rc != 0:
                for report in reports:
                    if report.failure is None:
                        self.one_controller(report.target(), settings[index + 1:])
                return skipped
        return skipped

    def _take(self, outcome: dict, setting: Setting, rc: int | None) -> ControllerReport:
        identity = outcome.get("controller") or {}
        key = (identity.get("slot"), identity.get("serial"))
        report = self.reports.setdefault(key, ControllerReport(outcome))
        report.add(outcome, setting, rc, self.module.check_mode)
        return report


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "slot": {"type": "str"},
            "serial": {"type": "str"},
            "all": {"type": "bool"},
            "ratio": {"type": "str"},
            "no_battery_write_cache": {"type": "bool"},
            "drive_write_cache": {"type": "bool"},
            "usage": {"type": "str", "choices": ["configured", "unconfigured", "hba"]},
            "logical_drive": {"type": "str"},
            "caching": {"type": "bool"},
            "threshold_percent": {"type": "float"},
            **COMMON_OPTIONS,
        },
        mutually_exclusive=[["slot", "serial", "all"]],
        required_one_of=[["slot", "serial", "all"],
                         ["ratio", "no_battery_write_cache", "drive_write_cache",
                          "logical_drive"]],
        required_together=[["logical_drive", "caching"]],
        required_by={"usage": "drive_write_cache"},
        supports_check_mode=True,
    )
    params = module.params
    if params["all"] is False:
        module.fail_json(msg="all: false names no controller; give slot or serial instead")
    extra = source_arguments(module) + ["--json"]
    threshold = params["threshold_percent"]
    if threshold is not None:
        if not (math.isfinite(threshold) and 0 <= threshold <= 100):
            module.fail_json(msg=f"threshold_percent: {threshold!r} is not a number from 0 "
                                 "to 100")
        extra += ["--threshold", repr(threshold)]
    if module.check_mode:
        extra.append("--dry-run")

    settings = wanted_settings(params)
    task = Task(module, extra)
    if params["all"]:
        skipped = task.every_controller(settings)
    else:
        skipped = []
        task.one_controller(target_of(module), settings)

    done = list(task.reports.values())
    failures = [report.failure for report in done if report.failure] + task.unreported
    result = {"changed": any(report.changed for report in done),
              "controllers": [report.as_dict() for report in done], "skipped": skipped}
    if module._diff:
        result["diff"] = [report.diff() for report in done]
    if failures:
        module.fail_json(msg="; ".join(failure[1] for failure in failures),
                         rc=failures[0][0], **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
