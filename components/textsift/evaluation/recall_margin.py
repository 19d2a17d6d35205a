"""How much more of the gold one detector finds than another, and how sure that is (``make bench``'s margin of
textsift over Presidio per test set, genre and type).

Two tools' recall on the same gold is compared mention by mention, with a paired percentile bootstrap
(:mod:`textsift.evaluation.bootstrap`): a margin read from a genre's few mentions says how little it can say.
Unlike the leak intervals, mentions are resampled, not documents: a GUM genre's test documents are 2 to 5, too few
to resample (one document gives a zero-width interval). Mentions of one document are not independent, so the
interval is a lower bound on the uncertainty, most of all where one document holds most mentions.
Pure: spans in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from textsift.corpus import Span
from textsift.detection.scoring import overlaps
from textsift.evaluation.bootstrap import bootstrap, percentile_interval


def found_mentions(gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]], label: str) -> list[bool]:
    """Per gold span of type ``label``, text by text in order: whether a prediction overlaps it (:func:`overlaps`);
    the mean is that type's overlap recall."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold span lists for {len(predicted)} predicted ones")
    return [any(overlaps(g, p) for p in found) for doc, found in zip(gold, predicted, strict=True)
            for g in doc if g.label == label]


@dataclass(frozen=True)
class RecallMargin:
    """One tool's overlap recall minus another's on the same gold mentions, with a paired bootstrap interval.

    Attributes:
        margin: recall(ours) - recall(theirs), in [-1, 1].
        low, high: the interval's ends.
        support: the gold mentions compared.
    """

    margin: float
    low: float
    high: float
    support: int


def recall_margin(gold: Sequence[Sequence[Span]], ours: Sequence[Sequence[Span]], theirs: Sequence[Sequence[Span]],
                  label: str, samples: int, rng: np.random.Generator, level: float = 0.95) -> RecallMargin:
    """How much more of ``label``'s gold mentions ``ours`` finds than ``theirs``, and how sure that is.

    The central ``level`` interval of ``samples`` resamples of the gold mentions (drawn from ``rng``), each keeping
    its pair of outcomes (found by ours, by theirs): what matters is the mentions one tool finds and the other misses.
    No mention: a zero margin and interval, support 0.
    """
    difference = (np.array(found_mentions(gold, ours, label), dtype=np.int8)
                  - np.array(found_mentions(gold, theirs, label), dtype=np.int8))
    if not len(difference):
        return RecallMargin(0.0, 0.0, 0.0, 0)
    resampled = bootstrap(len(difference), samples, rng, lambda rows: difference[rows].mean(axis=1))
    low, high = percentile_interval(resampled, level)
    return RecallMargin(float(difference.mean()), low, high, len(difference))
