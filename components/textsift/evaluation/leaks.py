"""Leaks by type with bootstrap intervals (METHODS.md §5): how many privacy spans of each label survive.

The frontier's one leak rate hides which kind of identifier gets through; this table gives, per
setting and label (and ``all``), the test split's spans, how many survive whole in the output, the
rate and its percentile-bootstrap interval over documents. Pure: per-document counts in, a frame out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from textsift.detection.types import identifier_group
from textsift.evaluation.bootstrap import ratio_interval
from textsift.rng import generator

ALL = "all"
GROUPS = ("direct", "quasi")  # rows over the direct and the quasi-identifiers (detection.types.IDENTIFIER_GROUPS)
COLUMNS = ("setting", "label", "spans", "leaked", "leak_rate", "leak_rate_ci_low", "leak_rate_ci_high")


def _counts_for(row: str, label: str) -> bool:
    """Whether a span of ``label`` counts in the row ``row``: ``all``, its identifier group, or its own label."""
    return row in (ALL, label) or (row in GROUPS and identifier_group(label) == row)


def leak_table(
    counts: Mapping[str, Sequence[Mapping[str, Mapping[str, int]]]], samples: int, level: float, seed: int,
) -> pd.DataFrame:
    """One row per (setting, label), per (setting, ``all``) and per (setting, ``direct``/``quasi``) where spans of
    that identifier group exist.

    Args:
        counts: per setting, per test document, ``{label: {"spans": n, "leaked": k}}``
            (:func:`textsift.evaluation.privacy.leak_counts`).
        samples, level: the bootstrap's resamples and coverage.
        seed: run seed; each interval's generator is keyed by (seed, setting, label).
    """
    rows = []
    for setting, documents in counts.items():
        labels = sorted({label for doc in documents for label in doc})
        groups = [g for g in GROUPS if any(identifier_group(label) == g for label in labels)]
        for label in (ALL, *groups, *labels) if labels else ():
            chosen = [[entry for name, entry in doc.items() if _counts_for(label, name)] for doc in documents]
            spans = np.array([sum(e["spans"] for e in doc) for doc in chosen])
            leaked = np.array([sum(e["leaked"] for e in doc) for doc in chosen])
            low, high = ratio_interval(leaked, spans, samples, level,
                                       generator(seed, "evaluate.bootstrap.leak", f"{setting}/{label}"))
            rows.append({"setting": setting, "label": label, "spans": int(spans.sum()), "leaked": int(leaked.sum()),
                         "leak_rate": float(leaked.sum() / spans.sum()), "leak_rate_ci_low": low,
                         "leak_rate_ci_high": high})
    return pd.DataFrame(rows, columns=list(COLUMNS))
