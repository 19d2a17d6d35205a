"""How much more of the gold one detector finds than another, and how sure that is (``make bench``'s margin of
textsift over Presidio per test set, genre and type).

Two tools' recall on the same gold is compared mention by mention, with a paired bootstrap interval: a margin read
from a genre's few mentions says how little it can say. Pure: spans in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from textsift.corpus import Span
from textsift.detection.scoring import overlaps


def found_mentions(gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]], label: str) -> list[bool]:
    """Per gold span of type ``label``, text by text in order: whether a prediction overlaps it (:func:`overlaps`);
    the mean is that type's overlap recall."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold span lists for {len(predicted)} predicted ones")
    return [any(overlaps(g, p) for p in found) for doc, found in zip(gold, predicted, strict=True)
            for g in doc if g.label == label]


@dataclass(frozen=True)
class RecallMargin:
    """One tool's overlap recall minus another's on the same gold mentions, with a 95% paired bootstrap interval.

    Attributes:
        margin: recall(ours) - recall(theirs), in [-1, 1].
        low, high: the interval's 2.5th and 97.5th percentiles.
        support: the gold mentions compared.
    """

    margin: float
    low: float
    high: float
    support: int


def recall_margin(gold: Sequence[Sequence[Span]], ours: Sequence[Sequence[Span]], theirs: Sequence[Sequence[Span]],
                  label: str, draws: int = 2000, seed: int = 0) -> RecallMargin:
    """How much more of ``label``'s gold mentions ``ours`` finds than ``theirs``, and how sure that is.

    The interval resamples the gold mentions with replacement (``draws`` times, from ``seed``), keeping each
    mention's pair of outcomes (found by ours, by theirs): what matters is the mentions one tool finds and the other
    misses. Mentions are resampled as independent; those of one document are not quite, so the interval is a little
    narrow where a few documents hold most mentions. No mention: a zero margin and interval, support 0.
    """
    ours_found = np.array(found_mentions(gold, ours, label), dtype=np.int8)
    theirs_found = np.array(found_mentions(gold, theirs, label), dtype=np.int8)
    difference = ours_found - theirs_found
    if not len(difference):
        return RecallMargin(0.0, 0.0, 0.0, 0)
    picks = np.random.default_rng(seed).integers(0, len(difference), size=(draws, len(difference)))
    resampled = difference[picks].mean(axis=1)
    low, high = np.quantile(resampled, [0.025, 0.975])
    return RecallMargin(float(difference.mean()), float(low), float(high), len(difference))
