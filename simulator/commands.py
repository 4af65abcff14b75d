"""A vendor command line (``ctrl slot=0 show config detail``) -> an action. Pure. Words are
case-insensitive (the CLI lower-cases what its errors quote), with the CLI's short forms
(``ctrl``, ``ld``, ``pd``); a refusal is a :class:`CommandError` with the ``Error:`` lines."""

from __future__ import annotations

from dataclasses import dataclass

_ALIASES = {
    "controller": "ctrl",
    "logicaldrive": "ld",
    "physicaldrive": "pd",
    "dwc": "drivewritecache",
    "nbwc": "nobatterywritecache",
    "aa": "arrayaccelerator",
    "quit": "exit",
}
_QUOTES = "\"'"
MISSING_TARGET = (
    "Error: The controller must be identified by slot, chassisname, wwn,",
    "       serialnumber, or IPF information.",
)


class CommandError(Exception):
    def __init__(self, *lines: str) -> None:
        super().__init__(lines[0])
        self.lines = lines


def syntax_error(word: str) -> CommandError:
    return CommandError(f'Error: Syntax error at "{word}"')


def invalid_target(word: str) -> CommandError:
    return CommandError(
        f'Error: Invalid target syntax. "{word}" is not a valid target. ',
        '       Type "help" for more details.',
    )


@dataclass(frozen=True)
class Target:
    """``slot`` None means ``ctrl all``; ``ld``/``pd`` hold a drive id or ``all``."""

    slot: str | None
    ld: str | None = None
    pd: str | None = None

    def text(self) -> str:  # as set target echoes it: "controller slot=0"
        return "controller all" if self.slot is None else f"controller slot={self.slot}"


@dataclass(frozen=True)
class Show:
    target: Target
    what: str  # list | detail | status | config detail


@dataclass(frozen=True)
class Modify:
    target: Target
    params: dict[str, str]
    forced: bool
    command: str  # canonical, as faults match it


@dataclass(frozen=True)
class SetTarget:
    target: Target


@dataclass(frozen=True)
class Simple:
    """``version``, ``help``, ``exit``, or an empty line (``""``)."""

    name: str


Action = Show | Modify | SetTarget | Simple


def _word(token: str) -> str:
    word = token.strip().lower()
    key, eq, value = word.partition("=")
    key = _ALIASES.get(key, key)
    return f"{key}={value.strip(_QUOTES)}" if eq else key


def canonical(tokens: list[str]) -> str:  # what faults match: "ctrl slot=0 show config"
    return " ".join(_word(t) for t in tokens if t.strip())


def parse(tokens: list[str], default: Target | None = None) -> Action:
    """``default``: the console's ``set target``."""
    command = canonical(tokens)
    words = command.split()
    if not words:
        return Simple("")
    head, rest = words[0], words[1:]
    if head in ("exit", "help", "version"):
        if rest and head == "version":
            raise syntax_error(rest[0])
        return Simple(head)
    if head == "set":
        if rest[:1] != ["target"] or len(rest) < 2:
            raise syntax_error(rest[0] if rest else "set")
        target, after = _target(rest[1:])
        if after:
            raise syntax_error(after[0])
        return SetTarget(target)
    if head == "ctrl":
        target, rest = _target(words)
    elif default is not None:
        target, rest = _drives(default, words)
    elif head in ("ld", "pd", "show", "modify"):
        raise CommandError(*MISSING_TARGET)
    else:
        raise syntax_error(head)
    return _command(target, rest, command)


def _target(words: list[str]) -> tuple[Target, list[str]]:
    if words[0] != "ctrl":
        raise syntax_error(words[0])
    if len(words) < 2 or words[1] in ("ld", "pd", "show", "modify"):
        raise CommandError(*MISSING_TARGET)
    selector = words[1]
    if selector == "all":
        slot = None
    elif selector.startswith("slot="):
        slot = selector.removeprefix("slot=")
        if not slot.isalnum():
            raise invalid_target(slot or selector)
    else:
        raise syntax_error(selector)
    return _drives(Target(slot), words[2:])


def _drives(target: Target, words: list[str]) -> tuple[Target, list[str]]:
    if not words or words[0] not in ("ld", "pd"):
        return target, words
    if len(words) < 2:
        raise syntax_error(words[0])
    kind, drive = words[0], words[1]
    new = Target(target.slot, ld=drive) if kind == "ld" else Target(target.slot, pd=drive)
    return new, words[2:]


def _command(target: Target, words: list[str], command: str) -> Action:
    if not words:
        raise syntax_error(command.split()[-1])
    verb, rest = words[0], words[1:]
    if verb == "show" and not (target.ld or target.pd):  # what the agent sends, no drives
        return Show(target, _show_what(target, rest))
    if verb == "modify":
        params: dict[str, str] = {}
        forced = False
        for word in rest:
            key, eq, value = word.partition("=")
            if word == "forced":
                forced = True
            elif eq and key and value:
                params[key] = value
            else:
                raise syntax_error(word)
        if not params:
            raise syntax_error("modify")
        return Modify(target, params, forced, command)
    raise syntax_error(verb)


def _show_what(target: Target, rest: list[str]) -> str:
    for index, word in enumerate(rest):
        second = index == 1 and rest[0] == "config" and word == "detail"
        if not ((index == 0 and word in ("detail", "status", "config")) or second):
            raise syntax_error(word)
    if rest == ["config"]:
        raise syntax_error("config")
    if not rest:
        return "list" if target.slot is None else "detail"
    return " ".join(rest)
