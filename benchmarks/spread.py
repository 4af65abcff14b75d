"""What every benchmark prints with its figures: the spread of several runs and the machine."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from pathlib import Path


def spread(values: list[float], unit: str = "", digits: int = 2, of: str = "runs") -> str:
    """``min 1.00 / median 1.20 / max 1.90 ms (5 runs)``."""
    low, mid, high = min(values), statistics.median(values), max(values)
    suffix = f" {unit}" if unit else ""
    return (f"min {low:.{digits}f} / median {mid:.{digits}f} / max {high:.{digits}f}{suffix} "
            f"({len(values)} {of})")


def machine() -> str:
    """CPU model, CPUs, load average, kernel and Python: the context of every figure."""
    model = next((line.split(":", 1)[1].strip()
                  for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown CPU")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{model}, {os.cpu_count()} CPUs, load average {load}, Linux {platform.release()}, "
            f"Python {sys.version.split()[0]}")
