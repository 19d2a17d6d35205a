"""attack, leak part: which gold spans of the test split each corpus still contains, by span type (§5).

The counts per document come from :func:`textsift.evaluation.privacy.leak_counts` (the rule privatize's
``privacy.leak.rate`` uses); here they become the report's table, with a bootstrap interval per rate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from textsift.evaluation.leaks import ALL, leak_table
from textsift.evaluation.params import BootstrapParams


def leak_breakdown(counts: Mapping[str, Sequence[Mapping[str, Mapping[str, int]]]], options: BootstrapParams,
                   seed: int) -> pd.DataFrame:
    """Leaks by setting and span label (counts, rate, bootstrap interval); ``counts`` has ``original`` first.

    Its ``all`` rows equal each setting's ``privacy.leak.rate`` from privatize (same spans, same rule).
    """
    return leak_table(counts, options.samples, options.level, seed)


def leak_intervals(leaks: pd.DataFrame, row: str = ALL) -> dict[str, tuple[float, float]]:
    """Per setting, the bootstrap interval of its leak rate over the spans of ``row`` (``all``, ``direct``,
    ``quasi`` or a label)."""
    overall = leaks[leaks["label"] == row]
    return {str(r["setting"]): (float(r["leak_rate_ci_low"]), float(r["leak_rate_ci_high"]))
            for _, r in overall.iterrows()}
