"""The interest attacker on privatized text (METHODS.md §4.2 used as §5's attribute-inference attack).

The same IPI model reads each test document before and after privatization. A document "reveals" an
interest when the attacker infers one from the original; the attribute leak rate is the share of
revealing documents whose privatized version still gives the attacker the same interest. Where the
corpus knows each document's true interest (the demo corpus plants them; ``interest_field`` for a
file), the attacker is also scored against it: its accuracy on documents that have an interest, and
how often it claims one where there is none. The same metric names for every mechanism, so the
frontier can line them up. Pure: inferred labels in.
"""

from __future__ import annotations

from collections.abc import Sequence

from textsift.interests.synthetic import NONE


def interest_leak(original: Sequence[str], privatized: Sequence[str]) -> dict[str, float]:
    """``interest.revealing`` (share of documents with an inferred interest), ``interest.leak_rate`` (of those,
    the share still inferred the same from the output; absent when none reveals one) and ``interest.agreement``
    (same inference, ``none`` included)."""
    pairs = list(zip(original, privatized, strict=True))
    if not pairs:
        return {}
    revealing = [(a, b) for a, b in pairs if a != NONE]
    metrics = {"interest.revealing": len(revealing) / len(pairs),
               "interest.agreement": sum(a == b for a, b in pairs) / len(pairs)}
    if revealing:
        metrics["interest.leak_rate"] = sum(a == b for a, b in revealing) / len(revealing)
    return metrics


def interest_accuracy(truth: Sequence[str | None], inferred: Sequence[str]) -> dict[str, float]:
    """The attacker against known interests (``None`` = unknown, skipped): ``interest.accuracy`` (of documents
    with an interest, the share whose interest it infers) and ``interest.false_positive_rate`` (of documents
    with none, the share it still assigns one); each absent when no document is in its group."""
    known = [(t, i) for t, i in zip(truth, inferred, strict=True) if t is not None]
    interested = [(t, i) for t, i in known if t != NONE]
    uninterested = [i for t, i in known if t == NONE]
    metrics = {}
    if interested:
        metrics["interest.accuracy"] = sum(t == i for t, i in interested) / len(interested)
    if uninterested:
        metrics["interest.false_positive_rate"] = sum(i != NONE for i in uninterested) / len(uninterested)
    return metrics
