"""What every textsift process sets first (CLI, flows, tests, benchmarks), before the heavy libraries load."""

from __future__ import annotations

from textsift.allocator import keep_freed_memory
from textsift.telemetry import disable_telemetry


def prepare_process() -> None:
    """Telemetry and progress bars off (:mod:`textsift.telemetry`); freed tensor memory kept for the next step
    (:mod:`textsift.allocator`)."""
    keep_freed_memory()
    disable_telemetry()
