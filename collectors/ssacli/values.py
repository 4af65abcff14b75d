"""Conversions of single printed values. Each returns ``None`` for text it cannot read."""

from __future__ import annotations

import math
import re

from smartarray_agent.common.model import normalise_status

_NUMBER_UNIT = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]i?B)?$", re.I)
# A search starts only at a number's first digit: tried from each digit of a long run, it
# would cost the run's length squared.
_RATIO = re.compile(r"(?<!\d)(\d++)\s*+%\s*+Read\s*+/\s*+(\d++)\s*+%\s*+Write", re.I)
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_DECIMAL = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_DIGITS = re.compile(r"[0-9]+")
_PERCENT = re.compile(r"^(?P<n>[-+]?\d+(?:\.\d+)?)\s*%")
_PROGRESS = re.compile(r"(?<!\d)(?P<n>\d++(?:\.\d++)?)\s*+%\s*+complete", re.I)
_DAYS = re.compile(r"^(?P<n>\d+)\s*days?$", re.I)
# a drive status ends at the first comma, sentence stop or parenthesised tail:
# "Recovering, 55.73% complete", "Erase Complete. Reenable Before Using.", "OK, spare"
_DRIVE_STATUS_END = re.compile(r"[,(]|\.(?:\s|$)")
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", re.I)
_SWITCH = {**dict.fromkeys(("true", "enabled", "enable", "yes", "on"), True),
           **dict.fromkeys(("false", "disabled", "disable", "no", "off"), False)}


def cache_size_bytes(text: str | None) -> int | None:
    """``'512 MB'`` -> 512 MiB; ``'2.0 GB'`` and ssacli 3's bare ``'2.0'`` -> 2 GiB."""
    return _size(text, _BINARY, default_unit="G")


def logical_size_bytes(text: str | None) -> int | None:
    """Logical drive sizes: the CLI prints binary units labelled ``GB``/``TB``."""
    return _size(text, _BINARY, default_unit=None)


def physical_size_bytes(text: str | None) -> int | None:
    """Physical drive sizes: decimal, as on the drive's label (``300 GB``, ``1.9 TB``)."""
    return _size(text, _DECIMAL, default_unit=None)


def _size(text: str | None, scale: dict[str, int], default_unit: str | None) -> int | None:
    match = _NUMBER_UNIT.match((text or "").strip())
    if not match:
        return None
    number, unit = match.groups()
    letter = unit[0].upper() if unit else default_unit
    if letter is None:
        return None
    size = float(number) * scale[letter]
    return round(size) if math.isfinite(size) else None  # past a float: no real size


def cache_ratio(text: str | None) -> tuple[int, int] | None:
    """``'25% Read / 75% Write'`` -> ``(25, 75)``."""
    match = _RATIO.search(text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def switch(text: str | None) -> bool | None:
    """``True``/``Enabled``/``Yes`` -> True; ``False``/``Disabled``/``No`` -> False."""
    return _SWITCH.get((text or "").strip().lower())


def integer(text: str | None) -> int | None:
    word = (text or "").strip()
    return int(word) if _DIGITS.fullmatch(word) else None


def number(text: str | None) -> float | None:
    try:
        value = float((text or "").split()[0])
    except (ValueError, IndexError):
        return None
    return value if math.isfinite(value) else None


def spaced(text: str | None) -> str | None:
    """Runs of spaces made one: the INQUIRY padding of ``'HP      EG0300FBDSP'`` goes."""
    return " ".join((text or "").split()) or None


def text_or_none(text: str | None) -> str | None:
    return (text or "").strip() or None


def percent(text: str | None) -> float | None:
    """``'12.94%'`` -> 12.94, ``'-49.95%'`` -> -49.95 (not clamped), ``'66%'`` -> 66.0."""
    match = _PERCENT.match((text or "").strip())
    return float(match.group("n")) if match else None


def days(text: str | None) -> int | None:
    """``'270 days'`` -> 270."""
    match = _DAYS.match((text or "").strip())
    return int(match.group("n")) if match else None


def drive_status(text: str | None) -> tuple[str | None, float | None]:
    """``'Recovering, 55.73% complete'`` -> ``('recovering', 55.73)``; ``'Erase Complete.
    Reenable Before Using.'`` -> ``('erase_complete', None)``: a new word is one state, not
    one at every percent."""
    if text is None:
        return None, None
    head = _DRIVE_STATUS_END.split(text.strip(), maxsplit=1)[0]
    progress = _PROGRESS.search(text)
    return normalise_status(head), float(progress.group("n")) if progress else None


def pci_address(text: str | None) -> str | None:
    """``'0000:0B:00.0'`` -> ``'0000:0b:00.0'``, as sysfs names it."""
    word = text_or_none(text)
    return word.lower() if word and _PCI_ADDRESS.match(word) else None
