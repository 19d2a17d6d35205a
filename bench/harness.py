"""The benchmark record format and the JSON writer shared by every figure.

A figure is ``{"name", "value", "unit", "device", "params", "baseline", "ratio"}``; a baseline,
when there is one, is measured side by side in the same run and ``ratio = value / baseline``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from textsift.corpus import write_json


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    device: str
    params: dict[str, Any] = field(default_factory=dict)
    baseline: dict[str, Any] | None = None
    ratio: float | None = None

    def summary(self) -> str:
        line = f"{self.name}: {self.value:,.2f} {self.unit} on {self.device}"
        if self.baseline and self.ratio is not None:
            line += f" ({self.ratio:.2f}x {self.baseline['name']} = {self.baseline['value']:,.2f})"
        return line


def cpu_device() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu: {model} x{os.cpu_count()}"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call, and its result."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def write_results(figures: list[Figure], path: Path) -> None:
    write_json([asdict(f) for f in figures], path)
