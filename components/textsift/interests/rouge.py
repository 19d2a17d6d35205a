"""ROUGE-1, ROUGE-2, ROUGE-L and ``main`` for IPI's generated text (METHODS.md §4.2).

Scores compare the generated ``"<interest> : <evidence>"`` with the reference on lower-cased word
tokens (punctuation dropped). Each ROUGE is an F1 (β = 1) of clipped n-gram overlap (R-1, R-2) or of
the longest common subsequence (R-L), as the common ROUGE implementations report them; ``main`` is
0.2·R1 + 0.4·R2 + 0.4·RL. Corpus scores are the mean over pairs. Two empty texts score 1 (nothing
to say, and nothing said: an exact match), one empty text 0.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
WEIGHTS = {"rouge_1": 0.2, "rouge_2": 0.4, "rouge_l": 0.4}


def words(text: str) -> list[str]:
    """The lower-cased word tokens ROUGE compares (letters and digits; punctuation and ``_`` dropped)."""
    return _WORD.findall(text.lower())


def _f1(overlap: float, generated: int, reference: int) -> float:
    if generated == 0 and reference == 0:
        return 1.0
    if overlap == 0:
        return 0.0
    precision, recall = overlap / generated, overlap / reference
    return 2 * precision * recall / (precision + recall)


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(generated: Sequence[str], reference: Sequence[str], n: int) -> float:
    """ROUGE-N: F1 of the clipped n-gram overlap of two token lists (METHODS.md §4.2)."""
    got, want = _ngrams(list(generated), n), _ngrams(list(reference), n)
    return _f1(sum((got & want).values()), sum(got.values()), sum(want.values()))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Longest common subsequence length (dynamic programming, one row at a time)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_scores(generated: str, reference: str) -> dict[str, float]:
    """``rouge_1``, ``rouge_2``, ``rouge_l`` and ``main`` of one generated text against its reference."""
    got, want = words(generated), words(reference)
    scores = {"rouge_1": rouge_n(got, want, 1), "rouge_2": rouge_n(got, want, 2),
              "rouge_l": _f1(lcs_length(got, want), len(got), len(want))}
    scores["main"] = sum(weight * scores[name] for name, weight in WEIGHTS.items())
    return scores


def corpus_rouge(generated: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean of :func:`rouge_scores` over pairs (0 for each score when there are none)."""
    pairs = [rouge_scores(g, r) for g, r in zip(generated, references, strict=True)]
    keys = ("rouge_1", "rouge_2", "rouge_l", "main")
    return {k: sum(p[k] for p in pairs) / len(pairs) if pairs else 0.0 for k in keys}
