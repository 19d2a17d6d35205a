"""The settings of the property-based fuzz tests: derandomized (CI sees the same examples every run), no example
database, no deadline.

Each fuzzed surface (readers, params, REST API) states how many inputs its tests draw in CI; ``make fuzz`` sets
``TEXTSIFT_FUZZ_INPUTS`` (inputs per surface, e.g. 10000) and every test of a surface draws proportionally more.
"""

from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, settings

INPUTS_ENV = "TEXTSIFT_FUZZ_INPUTS"


def fuzz(examples: int, surface: int) -> settings:
    """Hypothesis settings for a test that draws ``examples`` of its surface's ``surface`` CI inputs, scaled so the
    surface draws at least ``$TEXTSIFT_FUZZ_INPUTS`` (when set)."""
    wanted = int(os.environ.get(INPUTS_ENV, "0"))
    scale = max(1, math.ceil(wanted / surface))
    return settings(max_examples=examples * scale, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
