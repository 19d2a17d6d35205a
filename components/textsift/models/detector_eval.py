"""Detector metrics: precision, recall and F1 with exact span match, and the paper's accuracy (METHODS.md §4.1).

A predicted span counts as correct only when ``(start, end, label)`` equals a gold span of the
same text. Accuracy follows the paper's eq. (21), ``(TP + TN) / (TP + FP + TN + FN)``, counted
over word tokens (``textsift.tokenize.words``; a token is inside a span when their characters
overlap): per type, each token is a binary decision "inside a span of this type"; overall, a
token is right when its set of predicted types equals its set of gold types (the usual NER
token accuracy, ``O`` tokens included). Ratios with a zero denominator are 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from textsift.corpus import Span
from textsift.models.detector import Detector, Example, detect
from textsift.tokenize import words


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _prf(correct: int, predicted: int, gold: int) -> dict[str, float]:
    precision, recall = _ratio(correct, predicted), _ratio(correct, gold)
    return {"precision": precision, "recall": recall, "f1": _ratio(2 * precision * recall, precision + recall),
            "support": float(gold), "predicted": float(predicted)}


def _token_types(text: str, spans: Sequence[Span]) -> list[frozenset[str]]:
    """Per word token of ``text``, the labels of the spans overlapping it."""
    return [frozenset(s.label for s in spans if s.start < token.end and token.start < s.end) for token in words(text)]


def span_metrics(
    texts: Sequence[str], gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]],
    labels: Sequence[str] = (), prefix: str = "detector",
) -> dict[str, float]:
    """Overall and per-type metrics under stable keys.

    Args:
        texts: the texts the spans index.
        gold, predicted: spans per text.
        labels: types always reported (with the types found in ``gold`` and ``predicted``).
        prefix: the key prefix, e.g. ``detector`` or ``flat``.

    Returns:
        ``{prefix}.precision|recall|f1|accuracy|support|predicted`` and the same per type as
        ``{prefix}.{TYPE}.recall`` etc.
    """
    gold_sets = [set(spans) for spans in gold]
    pred_sets = [set(spans) for spans in predicted]
    types = sorted({*labels, *(s.label for g in gold_sets for s in g), *(s.label for p in pred_sets for s in p)})
    out: dict[str, float] = {}
    correct = sum(len(g & p) for g, p in zip(gold_sets, pred_sets, strict=True))
    for key, value in _prf(correct, sum(map(len, pred_sets)), sum(map(len, gold_sets))).items():
        out[f"{prefix}.{key}"] = value
    token_gold = [t for text, g in zip(texts, gold, strict=True) for t in _token_types(text, g)]
    token_pred = [t for text, p in zip(texts, predicted, strict=True) for t in _token_types(text, p)]
    out[f"{prefix}.accuracy"] = _ratio(sum(g == p for g, p in zip(token_gold, token_pred, strict=True)),
                                       len(token_gold))
    for label in types:
        hit = sum(len({s for s in g & p if s.label == label}) for g, p in zip(gold_sets, pred_sets, strict=True))
        n_pred = sum(1 for p in pred_sets for s in p if s.label == label)
        n_gold = sum(1 for g in gold_sets for s in g if s.label == label)
        for key, value in _prf(hit, n_pred, n_gold).items():
            out[f"{prefix}.{label}.{key}"] = value
        agree = sum((label in g) == (label in p) for g, p in zip(token_gold, token_pred, strict=True))
        out[f"{prefix}.{label}.accuracy"] = _ratio(agree, len(token_gold))
    return out


def evaluate_detector(
    detector: Detector, examples: Sequence[Example], batch_size: int | None = None, prefix: str = "detector"
) -> dict[str, float]:
    """Detect on ``examples`` (``.text``, ``.spans``) and score against their spans with :func:`span_metrics`."""
    texts = [ex.text for ex in examples]
    predicted = detect(detector, texts, batch_size)
    return span_metrics(texts, [list(ex.spans) for ex in examples], predicted, detector.labels, prefix)
