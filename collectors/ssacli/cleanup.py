"""Pasted or captured text -> clean lines: CRLF and lone CR, tabs, trailing blanks, shell and
console prompts (``root@host:~# hpacucli ...``, ``=> ctrl all show``), the banner, the echo of
``set target`` and a paste's indentation go; what went is reported, so that the parser can
tell CLI output from anything else."""

from __future__ import annotations

import re
from dataclasses import dataclass

_BANNER = re.compile(
    r"^(?:HPE? )?(?:Array Configuration Utility|Smart Storage Administrator) CLI\s+(\S+)$"
)
_BANNER_FIXED = (
    "Detecting Controllers...Done.",
    'Type "help" for a list of supported commands.',
    'Type "exit" to close the console.',
)
_LINE_END = re.compile(r"\r\n?|\n")
_CONSOLE_PROMPT = re.compile(r"^=>(?:\s(.*))?$")
_TARGET_ECHO = re.compile(r'^"[^"]*"$')
_TOOL = r"(?:\S*/)?(?:ssacli|hpssacli|hpacucli|uname26)\b"
_SHELL_PROMPT = re.compile(
    r"^(?:#"  # '# cmd', '#root@x:~# cmd', '#sudo cmd'
    r"|\$\s"  # '$ cmd'
    r"|\[[^\]]*\]\s?[#$]"  # '[root@h ~]# cmd'
    r"|[\w.@:~/-]+[#$](?:\s|$)"  # 'root@h:~# cmd', 'bfm02.example:~# cmd'
    r"|(?:sudo|docker)\s"  # 'sudo /opt/.../ssacli ...', 'docker run ... ssacli'
    rf"|{_TOOL}(?:\s|$)"  # 'ssacli ctrl all show'
    r")"
)


@dataclass
class CleanText:
    lines: list[str]
    cli_version: str | None = None
    saw_cli_frame: bool = False  # a banner, console prompt or target echo was present


def clean(text: str | bytes) -> CleanText:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    out = CleanText(lines=[])
    for raw in _LINE_END.split(text):  # no copy of the whole text: it may be 16 MiB
        line = raw.replace("\x00", "").expandtabs(8).rstrip()
        if not _is_frame(line.strip(), out):
            out.lines.append(line)
    margin = min((indent_of(line) for line in out.lines if line), default=0)
    if margin:  # a paste's indentation
        out.lines = [line[margin:] for line in out.lines]
    return out


def _is_frame(stripped: str, out: CleanText) -> bool:
    banner = _BANNER.match(stripped)
    if banner:
        out.cli_version = banner.group(1)
    if (banner or stripped in _BANNER_FIXED or _TARGET_ECHO.match(stripped)
            or _CONSOLE_PROMPT.match(stripped)):
        out.saw_cli_frame = True
        return True
    return bool(_SHELL_PROMPT.match(stripped))


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
