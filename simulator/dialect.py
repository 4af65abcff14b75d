"""What differs between the CLI generations: names, units, wording. Pure data. Texts marked
"seen" are in the real captures (../shared/captures/real); a guess says so."""

from __future__ import annotations

from dataclasses import dataclass, replace

MIB = 2**20
GIB = 2**30

# Seen (hpacucli 9.0 on an E200i): one space after "physical", one before "To ensure".
_DWC_WARNING_OLD = (
    "Warning: Without the proper safety precautions, use of write cache on physical",
    "         drives could cause data loss in the event of power failure. To ensure",
)
# Seen (ssacli 3.30 on a P410i): trailing space after "physical", two spaces before "To".
_DWC_WARNING_NEW = (
    "Warning: Without the proper safety precautions, use of write cache on physical ",
    "         drives could cause data loss in the event of power failure.  To ensure",
)
_DWC_WARNING_TAIL = (
    "         data is properly protected, use redundant power supplies and",
    "         Uninterruptible Power Supplies. Also, if you have multiple storage",
    "         enclosures, all data should be mirrored across them. Use of this",
    "         feature is not recommended unless these precautions are followed.",
)
CONTINUE_PROMPT = "         Continue? (y/n) "

_NO_CONTROLLERS_SHORT = ("Error: No controllers detected.",)
_NO_CONTROLLERS_LONG = (
    "Error: No controllers detected. Possible causes:",
    "        - The driver for the installed controller(s) is not loaded.",
    "        - On LINUX, the scsi_generic (sg) driver module is not loaded.",
    "        See the README file for more details.",
)
# Quoted in redhat-cip/edeploy#155 (hpacucli); the same ACU core is in all three CLIs.
LOCK_CONFLICT = (
    "Error: Another instance of ACU is already running (possibly a service). Please ",
    "terminate the ACU application before running the ACU CLI.",
)


@dataclass(frozen=True)
class Dialect:
    generation: str
    banner: str  # "{version}" is filled in
    default_version: str
    version_lines: tuple[str, ...]
    ratio_label: str
    ratio_step: int
    size_style: str  # "mb" | "mb-gb" | "bare-gib"
    modes: bool  # prints Controller Mode / (HBA Mode)
    gen10: bool
    raid_prefix: str  # "RAID " in Fault Tolerance, or ""
    ld_caching_label: str
    ld_caching_params: tuple[str, ...]
    mirror_group_base: int
    new_drive_words: bool  # "SAS HDD", "SATA SSD" in one-line drive forms
    cages: bool  # config detail lists drive cages and ports
    dwc_warning: tuple[str, ...]
    no_controllers: tuple[str, ...]
    monitor_delay: str
    unused_space: str

    def ratios(self) -> list[tuple[int, int]]:
        """Accepted ``cacheratio`` values, most read-heavy last."""
        return [(r, 100 - r) for r in range(0, 101, self.ratio_step)]

    def size(self, size_bytes: int) -> str:
        """Total Cache Size text: ``512 MB``, ``2.0 GB`` or bare ``2.0`` (GiB)."""
        if self.size_style == "bare-gib":
            return f"{size_bytes / GIB:.1f}"
        if self.size_style == "mb-gb" and size_bytes > GIB:
            return f"{size_bytes / GIB:.1f} GB"
        return f"{size_bytes // MIB} MB"


_SSACLI3 = Dialect(
    generation="ssacli3",
    banner="Smart Storage Administrator CLI {version}",
    default_version="3.10.3.0",
    version_lines=("   SSACLI Version: {version}", "   SOULAPI Version: {version}"),
    ratio_label="Cache Ratio",
    ratio_step=5,
    size_style="bare-gib",
    modes=True,
    gen10=False,
    raid_prefix="",
    ld_caching_label="Caching:  ",
    ld_caching_params=("caching", "arrayaccelerator"),
    mirror_group_base=1,
    new_drive_words=True,
    cages=True,
    dwc_warning=_DWC_WARNING_NEW + _DWC_WARNING_TAIL,
    no_controllers=_NO_CONTROLLERS_LONG,
    monitor_delay="60  min",
    unused_space="0 MB (0.00%)",
)
# What hpssacli 2 prints differently from ssacli 3, which kept the rest.
_HPSSACLI2 = replace(
    _SSACLI3, generation="hpssacli2", banner="HP Smart Storage Administrator CLI {version}",
    default_version="2.10.14.0",
    # Guess: shaped like the ssacli 3.25 `version` output quoted in libstoragemgmt#344.
    version_lines=("   HPSSACLI Version: {version}", "   SOULAPI Version: {version}"),
    size_style="mb-gb", mirror_group_base=0, new_drive_words=False, cages=False,
    dwc_warning=_DWC_WARNING_OLD + _DWC_WARNING_TAIL, unused_space="0  MB",
)


DIALECTS: dict[str, Dialect] = {
    "hpacucli9": replace(
        _HPSSACLI2, generation="hpacucli9", banner="HP Array Configuration Utility CLI {version}",
        default_version="9.40.12.0",
        version_lines=("   ACU CLI Version: {version}", "   SoulAPI Version: 6.2.25.0"),
        ratio_label="Accelerator Ratio", ratio_step=25, size_style="mb", modes=False,
        raid_prefix="RAID ", ld_caching_label="Array Accelerator: ",
        ld_caching_params=("arrayaccelerator",), no_controllers=_NO_CONTROLLERS_SHORT,
        monitor_delay="60 min", unused_space="0 MB",
    ),
    "hpssacli2": _HPSSACLI2,
    "ssacli3": _SSACLI3,
    "ssacli-gen10": replace(
        _SSACLI3, generation="ssacli-gen10", default_version="3.30.13.0", gen10=True
    ),
}
