"""Parse Smart Array CLI output (hpacucli 8/9, hpssacli 2, ssacli 3-6) into a
:class:`~smartarray_agent.model.Snapshot`. Pure: text in, model out, no I/O.

Reads ``ctrl all show config detail``, ``show detail``, ``show status``, ``show config``, the
one-line ``ctrl all show``, logical and physical drive listings and ``Error:`` outputs, as
printed or as pasted (prompts, banners, CRLF, trailing blanks, uniform indentation). Lines it
does not know are kept in ``unparsed_lines``. Text that is not CLI output at all raises
:class:`ParseError`, the only exception that leaves :func:`parse`.
"""

from __future__ import annotations

from smartarray_agent.model import Snapshot, VendorError

from . import interpret
from .cleanup import clean
from .errors import ParseError, classify_error
from .scan import scan

__all__ = ["ParseError", "parse"]

_VERSION_KEYS = ("ACU CLI Version", "SSA CLI Version", "SSACLI Version", "CLI Version")
_VERSION_OUTPUT_KEYS = (*_VERSION_KEYS, "SoulAPI Version")


def parse(text: str | bytes) -> Snapshot:
    cleaned = clean(text)
    scanned = scan(cleaned.lines)
    version = next((v for k, v in scanned.pairs if k in _VERSION_KEYS), None)
    if not (scanned.controllers or scanned.errors or cleaned.saw_cli_frame or version):
        raise ParseError(_describe_refusal(cleaned.lines))
    error = None
    if scanned.errors:
        first = scanned.errors[0]
        error = VendorError(
            message=first.message,
            detail=first.detail,
            kind=classify_error(first.message),
        )
    return Snapshot(
        controllers=[interpret.controller(c) for c in scanned.controllers],
        error=error,
        cli_version=cleaned.cli_version or version,
        notices=scanned.notices,
        unparsed_lines=scanned.unparsed
        + [f"{k}: {v}" for k, v in scanned.pairs if k not in _VERSION_OUTPUT_KEYS],
    )


def _describe_refusal(lines: list[str]) -> str:
    first = next((line.strip() for line in lines if line.strip()), None)
    if first is None:
        return "no Smart Array CLI output: the text is empty"
    shown = first if len(first) <= 60 else first[:57] + "..."
    return f"not Smart Array CLI output: no controller, error or console line (starts {shown!r})"
