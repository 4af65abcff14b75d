"""``modify`` commands checked against the controller, and what they change. Pure. Seen in
captures: the Gen10 ``usage`` error, the drive write cache warning, a good ``cacheratio``
printing nothing, and the shape of the invalid-value error."""

from __future__ import annotations

from dataclasses import dataclass, field

from smartarray_agent.simulator import render
from smartarray_agent.simulator.commands import (
    CommandError,
    Modify,
    Target,
    invalid_target,
    syntax_error,
)
from smartarray_agent.simulator.dialect import Dialect
from smartarray_agent.simulator.scenario import Controller, Scenario

_SWITCH = ("enable", "disable")
_USAGES = ("configured", "unconfigured", "hba")


@dataclass(frozen=True)
class Form:  # one modify parameter, as the CLI's help shows it
    target: str  # after ``<target>``: "" for the controller, "ld N" for a logical drive
    param: str
    values: tuple[str, ...]  # "R/W" stands for a ratio; "?" lists the accepted values
    options: tuple[str, ...] = ()  # the optional words that may follow it

    def help(self) -> str:  # "ld N modify arrayaccelerator=enable|disable|?"
        words = [self.target, "modify", f"{self.param}={'|'.join(self.values)}",
                 *(f"[{option}]" for option in self.options)]
        return " ".join(word for word in words if word)


# The modify forms this simulator accepts, written from HPE's documentation of its CLIs, not
# from the agent: the drive write cache form is ssacli's own help (Gen10, "<target> modify
# [drivewritecache=enable|disable|default|?] [usage=configured|unconfigured|hba] [forced]",
# quoted at https://serveraide.com/enabling-drive-write-cache-using-smart-storage-admin-cli-85875;
# before Gen10 there is no usage nor default); the others are the forms of HPE's CLI as public
# runbooks use them ("ctrl slot=0 modify cacheratio=10/90", "modify nobatterywritecache=enable",
# "logicaldrive 2 modify caching=enable": github.com/mykubernetes/linux, ssacli notes;
# "ld 1 modify caching=enable": github.com/mirisu2/notes, ESXi/ssacli.md; "logicaldrive 1
# modify arrayaccelerator=disable" on hpacucli) and hpacucli's "modify cacheratio=100/0" in a
# real capture (docs/cli.md, "Vendor commands"). The "?" query is the help's convention for
# every parameter. Which logical drive word a CLI generation knows is its dialect's
# (``ld_caching_params``: hpacucli has no ``caching=``).
FORMS = (
    Form("", "cacheratio", ("R/W", "?")),
    Form("", "nobatterywritecache", (*_SWITCH, "?")),
    Form("", "drivewritecache", (*_SWITCH, "default", "?"),
         (f"usage={'|'.join(_USAGES)}", "forced")),
    Form("ld N", "arrayaccelerator", (*_SWITCH, "?")),
    Form("ld N", "caching", (*_SWITCH, "?")),
)
_CONTROLLER_PARAMS = frozenset(form.param for form in FORMS if not form.target)


@dataclass(frozen=True)
class Change:  # set field (dotted) of the controller, or of logical drive ld, to value
    slot: str
    field: str
    value: object
    ld: str | None = None


@dataclass
class Plan:
    answer: render.Lines = field(default_factory=list)  # printed, e.g. an options list
    confirm: bool = False  # ask the drive-write-cache question first
    changes: list[Change] = field(default_factory=list)


def _invalid(param: str, value: str, target: Target, choices: list[str]) -> CommandError:
    lines = [f'Error: "{param}={value}" is not a valid option for {target.text()}']
    if choices:
        lines += ["", "Available options are:", *[f"       {c}" for c in choices]]
    return CommandError(*lines)


def _switch(param: str, value: str, target: Target, current: str,
            choices: tuple[str, ...] = _SWITCH) -> render.Lines | None:
    """The options for ``?``, None for a valid value; raises for an invalid one."""
    if value == "?":
        return render.options(current, list(choices))
    if value not in choices:
        raise _invalid(param, value, target, list(choices))
    return None


def plan(ctrl: Controller, d: Dialect, action: Modify) -> Plan:
    if action.target.pd:
        raise syntax_error("modify")
    if action.target.ld:
        return _plan_ld(ctrl, d, action)
    result = Plan()
    params = dict(action.params)
    usage = params.pop("usage", None)
    if usage is not None and not (d.gen10 and "drivewritecache" in params):
        raise syntax_error("usage")
    for param, value in params.items():
        if param not in _CONTROLLER_PARAMS:
            raise syntax_error(param)
        answer = _plan_param(ctrl, d, action.target, param, value, usage, result)
        result.answer += answer or []
    if result.answer:  # a "?" query lists options and changes nothing
        return Plan(answer=result.answer)
    result.confirm = result.confirm and not action.forced
    return result


def _plan_param(ctrl: Controller, d: Dialect, target: Target, param: str, value: str,
                usage: str | None, result: Plan) -> render.Lines | None:
    slot, cache = ctrl.slot, ctrl.cache
    usable = cache.present and ctrl.mode != "hba"
    if param == "cacheratio":
        ratios = [f"{r}/{w}" for r, w in d.ratios()]
        current = f"{cache.read_percent}/{cache.write_percent}"
        if not usable or cache.read_percent is None:
            raise _invalid(param, value, target, [])
        answer = _switch(param, value, target, current, tuple(ratios))
        if answer is None:
            read, write = (int(part) for part in value.split("/"))
            result.changes += [Change(slot, "cache.read_percent", read),
                               Change(slot, "cache.write_percent", write)]
        return answer
    if param == "nobatterywritecache":
        if not usable:
            raise _invalid(param, value, target, [])
        current = "enable" if cache.no_battery_write_cache else "disable"
        answer = _switch(param, value, target, current)
        if answer is None:
            result.changes.append(Change(slot, "cache.no_battery_write_cache", value == "enable"))
        return answer
    return _plan_dwc(ctrl, d, target, value, usage, result)


def _plan_dwc(ctrl: Controller, d: Dialect, target: Target, value: str, usage: str | None,
              result: Plan) -> render.Lines | None:
    cache = ctrl.cache
    if not d.gen10:
        current = "enable" if cache.drive_write_cache else "disable"
        answer = _switch("drivewritecache", value, target, current)
        if answer is None:
            result.changes.append(Change(ctrl.slot, "cache.drive_write_cache", value == "enable"))
            result.confirm = result.confirm or value == "enable"
        return answer
    choices = (*_SWITCH, "default")
    if value == "?":
        return render.options(None, list(choices))
    if usage is None:
        raise CommandError('Error: Parameter "usage" must be specified.')
    if usage not in _USAGES:
        raise _invalid("usage", usage, target, list(_USAGES))
    _switch("drivewritecache", value, target, "", choices)
    word = {"enable": "Enable", "disable": "Disable", "default": "Default"}[value]
    result.changes.append(Change(ctrl.slot, f"cache.drive_write_cache_policy.{usage}", word))
    result.confirm = result.confirm or value == "enable"
    return None


def _plan_ld(ctrl: Controller, d: Dialect, action: Modify) -> Plan:
    wanted = action.target.ld
    lds = [ld for ld in ctrl.logical_drives if wanted in ("all", ld.id)]
    if not lds:
        raise invalid_ld(ctrl, wanted)
    result = Plan()
    for param, value in action.params.items():
        if param not in d.ld_caching_params:
            raise syntax_error(param)
        current = "enable" if lds[0].caching else "disable"
        answer = _switch(param, value, action.target, current)
        if answer is not None:
            return Plan(answer=answer)
        result.changes += [Change(ctrl.slot, "caching", value == "enable", ld.id) for ld in lds]
    return result


def invalid_ld(ctrl: Controller, wanted: str | None) -> CommandError:
    if not ctrl.logical_drives:
        return CommandError("Error: The specified device does not have any logical drives.")
    return invalid_target(f"logicaldrive {wanted}")


def apply(scenario: Scenario, changes: list[Change]) -> Scenario:
    """A copy of ``scenario`` with ``changes`` made (values :func:`plan` gave: valid ones)."""
    new = scenario.model_copy(deep=True)
    for change in changes:
        ctrl = new.controller(change.slot)
        assert ctrl is not None, change.slot
        obj: object = ctrl
        if change.ld is not None:
            obj = next(ld for ld in ctrl.logical_drives if ld.id == change.ld)
        *path, last = change.field.split(".")
        for name in path:
            obj = getattr(obj, name)
        setattr(obj, last, change.value)
    return new
