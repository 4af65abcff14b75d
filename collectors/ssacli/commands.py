"""The vendor commands of the write path, as argv lists (never a shell string), and the
reading of a ``param=?`` answer."""

from __future__ import annotations

import re

_OPTION = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\b")


def controller(slot: str) -> list[str]:
    return ["ctrl", f"slot={slot}"]


def show_config(slot: str | None = None) -> list[str]:
    """``ctrl all show config detail``, or one controller's."""
    return [*(controller(slot) if slot else ["ctrl", "all"]), "show", "config", "detail"]


def cache_ratio(slot: str, read: int, write: int) -> list[str]:
    return [*controller(slot), "modify", f"cacheratio={read}/{write}"]


def cache_ratio_options(slot: str) -> list[str]:
    return [*controller(slot), "modify", "cacheratio=?"]


def no_battery_write_cache(slot: str, enable: bool) -> list[str]:
    return [*controller(slot), "modify", f"nobatterywritecache={_switch(enable)}"]


def drive_write_cache(slot: str, enable: bool, usage: str | None) -> list[str]:
    command = [*controller(slot), "modify", f"drivewritecache={_switch(enable)}"]
    return command + [f"usage={usage}"] if usage else command


def logical_drive_caching(slot: str, drive: str, enable: bool) -> list[str]:
    """``arrayaccelerator=`` on every generation: the form hpacucli, hpssacli and ssacli
    all accept (docs/cli.md, "Vendor commands", gives the sources)."""
    return [*controller(slot), "ld", drive, "modify", f"arrayaccelerator={_switch(enable)}"]


def ratio_options(output: str) -> list[tuple[int, int]]:
    """The ratios listed after ``Available options are:``, in printed order."""
    listed = output.partition("Available options are")[2].splitlines()[1:]
    return [(int(m.group(1)), int(m.group(2))) for m in map(_OPTION.match, listed) if m]


def _switch(enable: bool) -> str:
    return "enable" if enable else "disable"
