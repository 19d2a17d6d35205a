"""Silver labels: the corpus's own training split labelled by teachers that run offline (METHODS.md §4.1).

A corpus without gold spans would otherwise teach the detector nothing about its domain (its
casing, document length, vocabulary). Teachers are recognizers (:mod:`textsift.detection.recognizers`):
spaCy's English NER and the pattern recognizers (e-mail, phone, URL, IBAN/card with checksums,
dates, ID-like codes). Their spans are merged per document (a span several teachers find is kept
once); where the corpus has gold spans, gold wins: a teacher span overlapping a gold span is
dropped, the others are added. How often the teachers agree is measured and logged: per pair of
teachers, over the types both find, the overlap F1 of one against the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from textsift.corpus import Span
from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.detection.scoring import detection_scores


def _outside(span: Span, gold: Sequence[Span]) -> bool:
    return not any(span.start < g.end and g.start < span.end for g in gold)


def silver_spans(texts: Sequence[str], teachers: Sequence[Recognizer], min_score: float,
                 gold: Sequence[Sequence[Span]] | None = None) -> tuple[list[list[Span]], dict[str, float]]:
    """Teachers' spans per text (gold first when given) and the teachers' agreement figures.

    Args:
        texts: the training documents.
        teachers: recognizers run over every text.
        min_score: the confidence a teacher's span needs.
        gold: the documents' gold spans, which win over any teacher span they overlap.

    Returns:
        Spans per text (sorted; gold spans included) and ``silver.<teacher>.spans``,
        ``silver.added_spans``, ``silver.agreement.<a>_vs_<b>.f1`` (overlap F1 over shared types) and,
        with gold, ``silver.agreement.<teacher>_vs_gold.f1``.
    """
    found: dict[str, list[list[Detection]]] = {t.name: t.analyze(texts, min_score) for t in teachers}
    metrics: dict[str, float] = {f"silver.{name}.spans": float(sum(map(len, docs))) for name, docs in found.items()}
    for (a, docs_a), (b, docs_b) in combinations(found.items(), 2):
        shared = sorted({d.label for doc in docs_a for d in doc} & {d.label for doc in docs_b for d in doc})
        if shared:
            scores = detection_scores([[d.span for d in doc] for doc in docs_a],
                                      [[d.span for d in doc] for doc in docs_b], shared)
            metrics[f"silver.agreement.{a}_vs_{b}.f1"] = scores["overlap.f1"]
    if gold is not None and any(gold):
        gold_labels = sorted({s.label for doc in gold for s in doc})
        for name, docs in found.items():
            scores = detection_scores([list(g) for g in gold], [[d.span for d in doc] for doc in docs], gold_labels)
            metrics[f"silver.agreement.{name}_vs_gold.f1"] = scores["overlap.f1"]
    out, added = [], 0
    for k in range(len(texts)):
        base = list(gold[k]) if gold is not None else []
        extra = sorted({d.span for docs in found.values() for d in docs[k] if _outside(d.span, base)},
                       key=lambda s: (s.start, -s.end, s.label))
        added += len(extra)
        out.append(sorted(base + extra, key=lambda s: (s.start, -s.end, s.label)))
    metrics["silver.added_spans"] = float(added)
    return out, metrics
