"""Detection quality on annotated text, the figures users compare tools by (METHODS.md §4.1).

Per entity type, precision / recall / F1 under two matchings:
    exact: ``(start, end, label)`` equal to a gold span;
    overlap: same label and the shared characters cover at least half of the longer of the two
        spans (``OVERLAP``), so "Dr. Ann Lee" for "Ann Lee" counts, "Ann" for "Ann Lee Smith" does not.
And, over all types the gold annotates, character precision and recall regardless of type:
the share of predicted characters inside some gold span, and of gold characters inside some
prediction (what masking needs: a hidden character is hidden whatever the label).

Predictions of types the gold never annotates (a DATE on a corpus marked only for PER/LOC/ORG)
are left out of every figure, for every tool alike, so a detector is not charged for finding what
the annotators were not asked to mark. Pure: spans in, numbers out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textsift.corpus import Span

OVERLAP = 0.5


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _prf(correct_pred: int, predicted: int, found_gold: int, gold: int) -> dict[str, float]:
    precision, recall = _ratio(correct_pred, predicted), _ratio(found_gold, gold)
    return {"precision": precision, "recall": recall,
            "f1": _ratio(2 * precision * recall, precision + recall), "support": float(gold),
            "predicted": float(predicted)}


def overlaps(a: Span, b: Span) -> bool:
    """Same label and the shared characters cover >= ``OVERLAP`` of the longer span."""
    shared = min(a.end, b.end) - max(a.start, b.start)
    return a.label == b.label and shared > 0 and shared >= OVERLAP * max(a.end - a.start, b.end - b.start)


def covered_chars(spans: Iterable[Span]) -> set[int]:
    """The character offsets ``spans`` cover (overlapping spans count each character once)."""
    return {i for s in spans for i in range(s.start, s.end)}


def detection_scores(gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]],
                     labels: Sequence[str] | None = None) -> dict[str, float]:
    """Figures of ``predicted`` against ``gold`` (spans per text, same order).

    Args:
        gold: the annotators' spans per text.
        predicted: a tool's spans per text (already mapped to the gold's label names).
        labels: the types the gold annotates (default: every gold label); predictions of other
            types are ignored.

    Returns:
        ``{exact|overlap}.{precision|recall|f1}``, the same per type as ``{TYPE}.{exact|overlap}.*``,
        ``{TYPE}.support``, ``char.precision``, ``char.recall``, ``texts``, ``gold_spans``.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold span lists for {len(predicted)} predicted ones")
    kept = set(labels) if labels is not None else {s.label for doc in gold for s in doc}
    pred = [[s for s in doc if s.label in kept] for doc in predicted]
    out: dict[str, float] = {"texts": float(len(gold)), "gold_spans": float(sum(map(len, gold)))}
    for scope in (None, *sorted(kept)):
        g_docs = [[s for s in doc if scope in (None, s.label)] for doc in gold]
        p_docs = [[s for s in doc if scope in (None, s.label)] for doc in pred]
        name = "" if scope is None else f"{scope}."
        exact_hits = sum(len(set(g) & set(p)) for g, p in zip(g_docs, p_docs, strict=True))
        n_pred, n_gold = sum(map(len, p_docs)), sum(map(len, g_docs))
        for key, value in _prf(exact_hits, n_pred, exact_hits, n_gold).items():
            out[f"{name}exact.{key}"] = value
        pred_ok = sum(any(overlaps(p, g) for g in gd) for gd, pd in zip(g_docs, p_docs, strict=True) for p in pd)
        gold_ok = sum(any(overlaps(g, p) for p in pd) for gd, pd in zip(g_docs, p_docs, strict=True) for g in gd)
        for key, value in _prf(pred_ok, n_pred, gold_ok, n_gold).items():
            out[f"{name}overlap.{key}"] = value
    hit = predicted_chars = gold_chars = 0
    for g, p in zip(gold, pred, strict=True):
        g_chars, p_chars = covered_chars(g), covered_chars(p)
        hit += len(g_chars & p_chars)
        predicted_chars += len(p_chars)
        gold_chars += len(g_chars)
    out["char.precision"] = _ratio(hit, predicted_chars)
    out["char.recall"] = _ratio(hit, gold_chars)
    return out
