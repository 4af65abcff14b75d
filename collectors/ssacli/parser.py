"""Smart Array CLI output (hpacucli 8/9, hpssacli 2, ssacli 3-6: ``show config detail``,
``detail``, ``status``, ``config``, drive listings, ``Error:``), as printed or pasted -> a
:class:`~smartarray_agent.common.model.Snapshot`. Pure. Lines it does not know are kept in
``unparsed_lines``; text that is no CLI output raises :class:`ParseError`, and nothing else."""

from __future__ import annotations

import re

from smartarray_agent.collectors.ssacli import interpret
from smartarray_agent.collectors.ssacli.cleanup import clean
from smartarray_agent.collectors.ssacli.errors import ParseError, classify_error
from smartarray_agent.collectors.ssacli.scan import ScanResult, scan
from smartarray_agent.common.model import Snapshot, VendorError

__all__ = ["ParseError", "find_error", "parse"]

# "ACU CLI Version" (hpacucli), "HPSSACLI Version", "SSACLI Version", "SSA CLI Version"
_VERSION_KEY = re.compile(r"CLI Version$", re.I)
_VERSION_OUTPUT_KEY = re.compile(r"(CLI|SoulAPI) Version$", re.I)


def parse(text: str | bytes) -> Snapshot:
    cleaned = clean(text)
    scanned = ScanResult()
    controllers = [interpret.controller(c) for c in scan(cleaned.lines, scanned)]
    version = next((v.split()[0] for k, v in scanned.pairs if _VERSION_KEY.search(k) and v), None)
    if not (controllers or scanned.errors or cleaned.saw_cli_frame or version):
        raise ParseError(_describe_refusal(cleaned.lines))
    return Snapshot(
        controllers=controllers,
        error=_first_error(scanned),
        cli_version=cleaned.cli_version or version,
        notices=scanned.notices,
        unparsed_lines=scanned.unparsed
        + [f"{k}: {v}" for k, v in scanned.pairs if not _VERSION_OUTPUT_KEY.search(k)],
    )


# Every error line the scanner knows holds one: output without them is not scanned again.
_ERROR_MARKERS = ("Error:", "Could not find ")


def find_error(text: str) -> VendorError | None:
    """The first ``Error: ...`` of any vendor output (a modify's too), or None; never raises."""
    if not any(marker in text for marker in _ERROR_MARKERS):
        return None
    scanned = ScanResult()
    for _ in scan(clean(text).lines, scanned):
        pass
    return _first_error(scanned)


def _first_error(scanned: ScanResult) -> VendorError | None:
    if not scanned.errors:
        return None
    first = scanned.errors[0]
    return VendorError(
        message=first.message, detail=first.detail, kind=classify_error(first.message)
    )


def _describe_refusal(lines: list[str]) -> str:
    first = next((line.strip() for line in lines if line.strip()), None)
    if first is None:
        return "no Smart Array CLI output: the text is empty"
    shown = first if len(first) <= 60 else first[:57] + "..."
    return f"not Smart Array CLI output: no controller, error or console line (starts {shown!r})"
