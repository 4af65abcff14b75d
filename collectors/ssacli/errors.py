"""The one base of every error of the vendor CLI's source (:class:`SsacliError`), the
parser's, and the vocabulary of the vendor CLI's own ``Error:`` outputs."""

from __future__ import annotations

import re
from collections.abc import Sequence


class SsacliError(RuntimeError):
    """The vendor CLI gave no answer to use (not found, not run, timed out, crashed, said
    ``Error:``, printed what is not its output, the host lock not taken): the one class a
    caller catches."""


class ParseError(SsacliError, ValueError):
    """The text is not Smart Array CLI output at all (empty, junk, another program's): the
    only exception ``parser.parse`` raises."""


# (kind, pattern on the first line of the message, without "Error: ")
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("no_controllers", re.compile(r"^No controllers detected", re.I)),
    ("lock_conflict", re.compile(r"another instance of .* (is )?(already )?running", re.I)),
    ("syntax_error", re.compile(r"^Syntax error", re.I)),
    ("invalid_target", re.compile(r"^Invalid target|must be identified by", re.I)),
    ("invalid_option", re.compile(r"is not a valid option|^Invalid option|^Invalid value", re.I)),
    ("missing_parameter", re.compile(r"^Parameter .* must be specified", re.I)),
    ("no_logical_drives", re.compile(r"does not have any (logical|physical) drives", re.I)),
    ("cli_not_installed", re.compile(r"^Could not find (ssacli|hpssacli|hpacucli)", re.I)),
)


def classify_error(message: str) -> str:
    """The first of :data:`_KINDS` that ``message`` matches, else ``other``."""
    return next((kind for kind, pattern in _KINDS if pattern.search(message)), "other")


NO_CONTROLLERS_HINT = (
    "load the SCSI generic driver ('modprobe sg', and list it in /etc/modules-load.d): "
    "the CLI sees no controller without it"
)


class VendorCommandError(SsacliError):
    """The CLI answered ``Error: ...``: its first line, with the next where the sentence goes
    on there, and a hint where one helps."""

    def __init__(self, command: str, message: str, kind: str, detail: list[str]) -> None:
        self.command = command
        self.kind = kind
        self.detail = detail
        if detail and not message.endswith((".", "!", "?", ":")):
            message = f"{message} {detail[0].strip()}"  # the CLI wraps a long sentence
        text = f"{command!r}: Error: {message}"
        if kind == "no_controllers":
            text += f" ({NO_CONTROLLERS_HINT})"
        super().__init__(text)


class CliTimeout(SsacliError):
    """The CLI was ended at the timeout; the command is not run again (it would hang again)."""

    def __init__(self, argv: Sequence[str], timeout_s: float) -> None:
        super().__init__(f"{' '.join(argv)} did not finish in {timeout_s:g} s and was killed")


class CliFailed(SsacliError):
    """The CLI exited non-zero without an ``Error:`` line: it crashed, its output untrusted."""

    def __init__(self, argv: Sequence[str], returncode: int, output: str) -> None:
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited {returncode}"
        super().__init__(
            f"{' '.join(argv)} {how}" + (f" after printing {last[:80]!r}" if last else "")
        )


class CliOutputTooLarge(SsacliError):
    """The CLI printed more than ``run.MAX_OUTPUT_BYTES`` for a command: it was ended, and
    nothing of its answer is kept."""

    def __init__(self, argv: Sequence[str], limit: int) -> None:
        super().__init__(f"{' '.join(argv)} printed more than {limit // 2**20} MiB and was "
                         "ended (MAX_OUTPUT_BYTES)")


class ConsoleUnavailable(SsacliError):
    """The console ended before its first prompt: this CLI has none to offer."""


class ConsoleDied(SsacliError):
    """The console ended during a command."""
