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

from textsift.corpus import atomic_path, write_json

RESULTS_JSON = "bench/results/latest.json"
BENCH_KEY = 20261126  # the bench's key for its draws: public, it measures tools, not the secrecy of what they draw


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
    """The figures as JSON at ``path`` and as a Markdown table beside it (``.md``): the only place measured figures
    are written down, so no document holds a hand-typed timing."""
    write_json([asdict(f) for f in figures], path)
    with atomic_path(path.with_suffix(".md")) as tmp:
        tmp.write_text(results_markdown(figures), encoding="utf-8")


def _cell(value: float) -> str:
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def results_markdown(figures: list[Figure]) -> str:
    """One row per figure: name, value and unit, device, the baseline measured beside it and the ratio."""
    lines = ["# Benchmark figures", "", "Written by `make bench` (bench/run.py) from the same run as "
             f"`{RESULTS_JSON}`; every figure was measured on the device named in its row.", "",
             "| figure | value | device | baseline | ratio |", "|---|---|---|---|---|"]
    for f in figures:
        baseline = f"{f.baseline['name']}: {_cell(float(f.baseline['value']))}" if f.baseline else ""
        ratio = f"{f.ratio:.2f}x" if f.ratio is not None else ""
        lines.append(f"| {f.name} | {_cell(f.value)} {f.unit} | {f.device} | {baseline} | {ratio} |")
    return "\n".join(lines) + "\n"
