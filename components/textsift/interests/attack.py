"""The interest attacker on privatized text (METHODS.md §4.2 used as §5's attribute-inference attack).

The same IPI model reads each test document before and after privatization. A document "reveals" an
interest when the attacker infers one from the original; the attribute leak rate is the share of
revealing documents whose privatized version still gives the attacker the same interest. Where the
corpus knows each document's true interest (the demo corpus plants them; ``interest_field`` for a
file), the attacker is also scored against it: its accuracy on documents that have an interest, and
how often it claims one where there is none. The same metric names for every mechanism, so the
frontier can line them up. Pure: inferred labels in.

The attacker trusts an interest only with its explanation (``grounded``): the IPI model generates
"<interest> : <evidence>", and the interest counts when most of the evidence's words are in the text.
A model trained on social posts that reads a review it has no distractor for tends to invent an
interest with evidence from its training posts: on 400 demo documents, it gave one to 79% of those
without an interest; with the rule at half the evidence words, 0.7% (accuracy on documents with an
interest 0.861 -> 0.861 at the model's max_len).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from textsift.interests.synthetic import NONE

_WORD = re.compile(r"[^\W_]+")


def evidence_overlap(text: str, evidence: str) -> float:
    """The share of the evidence's words (case-insensitive) that occur in ``text``; 0 for no evidence."""
    words = _WORD.findall(evidence.lower())
    if not words:
        return 0.0
    present = set(_WORD.findall(text.lower()))
    return sum(word in present for word in words) / len(words)


def grounded(text: str, interest: str, evidence: str, min_overlap: float) -> str:
    """``interest`` when at least ``min_overlap`` of its evidence's words are in ``text`` (0: always), else ``none``."""
    if interest == NONE or min_overlap <= 0:
        return interest
    return interest if evidence_overlap(text, evidence) >= min_overlap else NONE


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


def interest_leak_counts(original: Sequence[str], privatized: Sequence[str]) -> tuple[list[int], list[int]]:
    """Per document, (1 if its interest is still inferred the same, 1 if the original reveals one): the numerators
    and denominators of ``interest.leak_rate``, for a bootstrap over documents."""
    revealing = [int(a != NONE) for a in original]
    same = [int(a != NONE and a == b) for a, b in zip(original, privatized, strict=True)]
    return same, revealing


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
