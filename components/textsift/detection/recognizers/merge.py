"""Running a recognizer set and merging what it finds (METHODS.md §4.1).

Each type has a threshold on the confidence (default and per-type overrides, params
``detection.threshold``/``thresholds``); a span passes when its confidence reaches its type's
threshold. Spans equal in ``(start, end, label)`` found by several recognizers become one,
with the highest confidence and every finder in ``source``. Spans that differ (nested or
overlapping) are all kept: redaction and masking protect the union of their characters.

Recognizers read each text's model view (:func:`textsift.normalize.model_view`: NFC, ``<br />`` as a space,
whitespace collapsed) and every span they find is mapped back before merging, so offsets always index the
caller's text, whatever its line breaks, tabs, markup or decomposed accents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from textsift.config import NormalizeParams
from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.normalize import TextView, model_view, to_original


def threshold_of(label: str, default: float, thresholds: Mapping[str, float]) -> float:
    """The confidence a span of type ``label`` needs."""
    return thresholds.get(label, default)


def merge_detections(found: Sequence[Sequence[Detection]], default: float,
                     thresholds: Mapping[str, float] | None = None,
                     labels: Sequence[str] | None = None) -> list[Detection]:
    """One text's detections from several recognizers: thresholded, restricted to ``labels``, merged.

    Args:
        found: per recognizer, its detections in the text.
        default: the confidence threshold of types not in ``thresholds``.
        thresholds: per-type thresholds.
        labels: types to keep (None: all).

    Returns:
        Detections sorted by ``(start, end, label)``; a span found by several recognizers appears
        once, ``score`` the highest, ``source`` the sorted ``+``-joined finders.
    """
    thresholds = thresholds or {}
    keep = set(labels) if labels is not None else None
    merged: dict[tuple[int, int, str], tuple[float, set[str]]] = {}
    for detections in found:
        for d in detections:
            if (keep is not None and d.label not in keep) or d.score < threshold_of(d.label, default, thresholds):
                continue
            key = (d.start, d.end, d.label)
            score, sources = merged.get(key, (0.0, set()))
            merged[key] = (max(score, d.score), sources | set(d.source.split("+")))
    return [Detection(s, e, label, score, "+".join(sorted(sources)))
            for (s, e, label), (score, sources) in sorted(merged.items())]


def in_original(view: TextView, detections: Sequence[Detection]) -> list[Detection]:
    """Detections found in ``view`` moved onto the original text's characters (:func:`textsift.normalize.to_original`);
    one that covers only whitespace of the view is dropped."""
    out = []
    for d in detections:
        span = to_original(view, d.start, d.end)
        if span is not None:
            out.append(replace(d, start=span[0], end=span[1]))
    return out


def analyze(recognizers: Sequence[Recognizer], texts: Sequence[str], default: float,
            thresholds: Mapping[str, float] | None = None,
            labels: Sequence[str] | None = None, *, view: NormalizeParams) -> list[list[Detection]]:
    """Every recognizer over the model views of ``texts``, mapped back to ``texts``, merged per text with
    :func:`merge_detections`.

    Each recognizer decodes at the lowest threshold any type uses, so the per-type thresholds
    apply after it, in one place. ``view``: how the views normalize (params ``ingest.normalize``).
    """
    views = [model_view(text, view) for text in texts]
    floor = min([default, *(thresholds or {}).values()])
    per_recognizer = [r.analyze([v.text for v in views], floor) for r in recognizers]
    return [merge_detections([in_original(v, found[k]) for found in per_recognizer], default, thresholds, labels)
            for k, v in enumerate(views)]
