"""Cut clean CLI lines into controllers, their key/value pairs and sub-blocks: the shape of
the output (headers, indentation, one-line drive entries, notices, ``Error:``), not what a
key means (:mod:`.interpret`). Every line ends up in a pair, a block, a notice or
``unparsed``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from smartarray_agent.collectors.ssacli.cleanup import indent_of

HEADER = re.compile(
    r"^(?P<model>[^:\s][^:]*?) in (?:Slot (?P<slot>\S+)|(?P<place>[A-Z0-9][A-Z0-9 _./-]*?))"
    r"(?P<tags>(?:\s*\((?:Embedded|RAID Mode|HBA Mode|Mixed Mode)\))*)"
    r"(?:\s*\(sn:(?P<sn>[^)]*)\))?$"
)
_TAG = re.compile(r"\((Embedded|RAID Mode|HBA Mode|Mixed Mode)\)")
_ERROR = re.compile(r"^Error:\s*(?P<message>.*)$")
_NOT_INSTALLED = re.compile(r"^Could not find (?:ssacli|hpssacli|hpacucli)\b.*$")
_NOTICE = re.compile(r"^(?:[A-Z]+(?: [A-Z]+)+|Warning|Note|Caution):\s")
_ARRAY = re.compile(r"^[Aa]rray:?\s+(?P<name>\S+)(?:\s+\((?P<info>.*)\))?$")
_LD_LINE = re.compile(r"^logicaldrive\s+(?P<id>\S+)\s+\((?P<info>.*)\)$")
_LD_DETAIL = re.compile(r"^Logical Drive:\s*(?P<id>\S+)$")
_PD_LINE = re.compile(r"^physicaldrive\s+(?P<id>\S+)\s+\((?P<info>.*)\)$")
_PD_DETAIL = re.compile(r"^physicaldrive\s+(?P<id>\S+)$")
_SENSOR = re.compile(r"^Sensor ID:\s*(?P<id>\S+)$")
# The key runs to the first colon outside parentheses (its trailing spaces are stripped
# after); no part of this or the next pattern is tried again from inside a run of spaces,
# which would cost a long line its length squared.
_PAIR = re.compile(r"^(?P<key>[A-Za-z0-9](?:[^:(]|\([^)]*\))*+):(?:\s+(?P<value>.*))?$")
# "Disk Name: /dev/sda          Mount Points: None" (hpssacli prints two pairs on one line)
_SECOND_PAIR = re.compile(r"(?<!\s)\s{3,}+(?=[A-Z][A-Za-z ]{2,40}:(?:\s|$))")
_SPACES = re.compile(r"\s+")
# Nested levels step by 3 columns; a one-column slip is a mis-indented line, not nesting
_NESTING_STEP = 2
_CONTINUATION_MIN_INDENT = 5  # notice continuations hang at 9, 27 or 31 columns


@dataclass
class Block:
    """A titled sub-block of a controller: ``kind`` is one of ``array``, ``array_line``,
    ``ld_line``, ``ld_detail``, ``pd_line``, ``pd_detail``, ``sensor``, ``component``."""

    kind: str
    ident: str
    indent: int
    info: str | None = None  # the parenthesised part of a one-line entry
    array: str | None = None  # the array a drive entry was printed under
    pairs: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ControllerText:  # one controller's part of the output
    model: str
    slot: str | None
    place: str | None
    tags: list[str]
    serial: str | None
    pairs: list[tuple[str, str]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


@dataclass
class ErrorText:  # an "Error:" line (or the CLI's "could not find"), and what follows it
    message: str
    detail: list[str] = field(default_factory=list)


@dataclass
class ScanResult:  # what the output holds besides its controllers
    errors: list[ErrorText] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)  # outside any controller
    notices: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


class _Scanner:
    def __init__(self, result: ScanResult) -> None:
        self.result = result
        self.ctrl: ControllerText | None = None
        self.ended: ControllerText | None = None  # the controller the last line ended
        self.stack: list[Block] = []
        self.error: ErrorText | None = None
        self.notice: list[str] | None = None
        self.last_pair: tuple[list[tuple[str, str]], int, int] | None = None  # (pairs, idx, indent)
        self.wrapped: list[str] = []  # the lines that continue the last pair's value
        # One copy of each key, value and pair: a big host prints "Status: OK" a hundred
        # thousand times, and the model keeps every pair.
        self.words: dict[str, str] = {}
        self.pairs: dict[tuple[str, str], tuple[str, str]] = {}

    def feed(self, line: str) -> None:
        text = line.strip()
        indent = indent_of(line)
        if not text:
            self._end_notice()
            return
        if self.notice is not None and self._continues_notice(text, indent):
            self.notice.append(text)
            return
        self._end_notice()
        if indent == 0 and self._top_level(text):
            return
        if self.error is not None:
            self.error.detail.append(text)
            return
        if self.ctrl is None:
            self._outside(text)
            return
        self._inside(text, indent)

    # -- top level -------------------------------------------------------------------
    def _top_level(self, text: str) -> bool:
        error = _ERROR.match(text) or _NOT_INSTALLED.match(text)
        if error:
            message = error.groupdict().get("message", text) or text
            self.error = ErrorText(message=message.strip())
            self.result.errors.append(self.error)
            return True
        if _NOTICE.match(text):
            self.notice = [text]
            return True
        if _LD_LINE.match(text) or _PD_LINE.match(text):
            return False  # a flat paste: drive lines at column 0 belong to the controller
        header = HEADER.match(text)
        if header:
            self._start_controller(header)
            return True
        return False

    def _start_controller(self, header: re.Match[str]) -> None:
        tags = _TAG.findall(header.group("tags") or "")
        serial = (header.group("sn") or "").strip() or None
        self.ended = self.ctrl
        self.ctrl = ControllerText(
            model=_SPACES.sub(" ", header.group("model").strip()),
            slot=header.group("slot"),
            place=header.group("place"),
            tags=tags,
            serial=serial,
        )
        self.stack = []
        self.error = None
        self._last(None)

    def _continues_notice(self, text: str, indent: int) -> bool:
        return not (HEADER.match(text) or _ERROR.match(text)) and (
            indent == 0 or indent >= _CONTINUATION_MIN_INDENT)

    def _end_notice(self) -> None:
        if self.notice is None:
            return
        target = self.ctrl.notices if self.ctrl else self.result.notices
        target.append(" ".join(self.notice))
        self.notice = None

    def _outside(self, text: str) -> None:
        pair = self._pair(text)
        if pair:
            self.result.pairs.append(pair)
        else:
            self.result.unparsed.append(text)

    # -- inside a controller ---------------------------------------------------------
    def _inside(self, text: str, indent: int) -> None:
        ctrl = self.ctrl
        assert ctrl is not None
        for pattern, kind in ((_LD_LINE, "ld_line"), (_PD_LINE, "pd_line")):
            match = pattern.match(text)
            if match:
                self._pop(indent + 1)
                ctrl.blocks.append(Block(kind, match.group("id"), indent, match.group("info"),
                                         self._array()))
                self._last(None)
                return
        opened = self._opened_block(text, indent)
        if opened is not None:
            self._last(None)
            self._open(opened)
            return
        if self._continues_value(text, indent):
            return
        for part in _SECOND_PAIR.split(text):
            pair = self._pair(part)
            if pair is None:
                self._title_or_item(text, indent)
                return
            self._pop(indent)
            target = self.stack[-1].pairs if self.stack else ctrl.pairs
            if (
                self.last_pair
                and self.last_pair[0] is target
                and indent >= self.last_pair[2] + _NESTING_STEP
            ):
                target = self._pair_to_block().pairs
            target.append(pair)
            self._last((target, len(target) - 1, indent))

    def _last(self, pair: tuple[list[tuple[str, str]], int, int] | None) -> None:
        """Make ``pair`` the one a wrapped line continues, after joining the lines that
        continued the one before (at once: line by line costs a long value its square)."""
        if self.wrapped and self.last_pair is not None:
            pairs, index, _ = self.last_pair
            key, value = pairs[index]
            pairs[index] = (key, " ".join([value, *self.wrapped]))
        self.wrapped = []
        self.last_pair = pair

    def _pair_to_block(self) -> Block:
        """The last pair heads deeper pairs (``Port Name: 1I``): a component block's title."""
        assert self.ctrl is not None and self.last_pair is not None
        self._last(self.last_pair)
        pairs, index, indent = self.last_pair
        key, value = pairs.pop(index)
        return self._open(Block("component", f"{key}: {value}" if value else key, indent))

    def _opened_block(self, text: str, indent: int) -> Block | None:
        array = _ARRAY.match(text)
        if array:
            return Block(kind="array", ident=array.group("name"), indent=indent,
                         info=array.group("info"))
        if text in ("unassigned", "Unassigned", "HBA Drives"):
            return Block(kind="array", ident="hba" if text == "HBA Drives" else "unassigned",
                         indent=indent)
        for pattern, kind in ((_LD_DETAIL, "ld_detail"), (_PD_DETAIL, "pd_detail"),
                              (_SENSOR, "sensor")):
            match = pattern.match(text)
            if match:
                return Block(kind=kind, ident=match.group("id"), indent=indent)
        return None

    def _continues_value(self, text: str, indent: int) -> bool:
        """A line with no key, deeper than the pair whose value it continues."""
        if self.last_pair is None or _PAIR.match(text):
            return False
        pairs, index, pair_indent = self.last_pair
        if indent < pair_indent + _NESTING_STEP or not pairs[index][1]:
            return False
        self.wrapped.append(text)
        return True

    def _title_or_item(self, text: str, indent: int) -> None:
        """A line with no ``key: value``: a component's title (drive cage, enclosure) when it
        is no deeper than the open block, else an item of it."""
        ctrl = self.ctrl
        assert ctrl is not None
        self._last(None)
        if self.stack and indent > self.stack[-1].indent:
            self.stack[-1].pairs.append(("", text))
            return
        if indent == 0 and not self.stack and ctrl.pairs:
            ctrl.unparsed.append(text)
            return
        self._open(Block("component", text, indent))

    def _pair(self, text: str) -> tuple[str, str] | None:
        match = _PAIR.match(text)
        if not match:
            return None
        key = _SPACES.sub(" ", match.group("key").strip())
        value = (match.group("value") or "").strip()
        pair = self.words.setdefault(key, key), self.words.setdefault(value, value)
        return self.pairs.setdefault(pair, pair)

    def _open(self, block: Block) -> Block:
        """``block`` in the controller's, in place of the open ones no shallower."""
        assert self.ctrl is not None
        self._pop(block.indent)
        block.array = self._array()
        self.ctrl.blocks.append(block)
        self.stack.append(block)
        return block

    def _pop(self, indent: int) -> None:  # close the open blocks at ``indent`` and deeper
        while self.stack and self.stack[-1].indent >= indent:
            self.stack.pop()

    def _array(self) -> str | None:
        return next((block.ident for block in reversed(self.stack) if block.kind == "array"), None)


def scan(lines: Iterable[str], result: ScanResult) -> Iterator[ControllerText]:
    """Each controller's part of ``lines`` as soon as it ends (the caller lets it go before
    the next is read); the rest of the output goes into ``result``."""
    scanner = _Scanner(result)
    for line in lines:
        scanner.feed(line)
        if scanner.ended is not None:
            yield scanner.ended
            scanner.ended = None
    scanner._end_notice()
    scanner._last(None)
    if scanner.ctrl is not None:
        yield scanner.ctrl
