"""Per-type confidence thresholds chosen on held-out annotated text (METHODS.md §4.1).

A detector's confidences are not comparable across types: on GUM's dev documents a LOC span at 0.3 is
right as often as an ORG span at 0.7. One threshold for every type is too low for some and too high for
others, so ``train_detectors`` chooses each type's threshold on its validation split of real annotated text
(GUM dev, BTC dev, WNUT-17 dev: text the detector never trained on and the test figures never see) and stores
them with the detector; detection uses them for the model's own detections unless params ``detection.thresholds``
names the type or ``detection.calibrated`` is false.

Two rules, a target per type. A precision target (quasi-identifiers: places, organisations and dates are often a
task's signal, so wrongly hidden ones cost utility): the lowest threshold of :data:`GRID` whose character precision
reaches it (the most recall that precision allows), else the most precise threshold (ties: the lower). A recall
target (direct identifiers: a missed name is a leak): the highest threshold whose character recall reaches it (the
most precision that recall allows) on every real corpus that marks the type, else the lowest threshold. Character
precision of a type is the share of the characters its spans cover that lie inside a gold span of any annotated
type (a hidden character is hidden whatever its label); character recall is the share of the type's gold characters
its spans cover. Pure: spans in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textsift.corpus import Span
from textsift.detection.params import CalibrationParams
from textsift.detection.recognizers.base import Detection
from textsift.detection.scoring import covered_chars

GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9,
        0.95)  # the thresholds tried; the lowest is the floor detections must be decoded at


@dataclass(frozen=True)
class Calibrated:
    """One type's chosen threshold and what it gave on the calibration text."""

    threshold: float
    char_precision: float
    char_recall: float
    reached: bool  # whether the target was reached


def type_curve(gold: Sequence[Sequence[Span]], found: Sequence[Sequence[Detection]], label: str,
               grid: Sequence[float] = GRID) -> list[tuple[float, float, float]]:
    """``(threshold, char precision, char recall)`` of type ``label`` at each threshold of ``grid``.

    Args:
        gold: annotated spans per text (only the types the annotators marked).
        found: detections per text, decoded at or below ``min(grid)``.
        label: the type.
    """
    if len(gold) != len(found):
        raise ValueError(f"{len(gold)} gold span lists for {len(found)} detection lists")
    gold_any = [covered_chars(doc) for doc in gold]
    gold_type = [covered_chars([s for s in doc if s.label == label]) for doc in gold]
    curve = []
    for threshold in grid:
        hit = predicted = covered = 0
        for any_chars, type_chars, doc in zip(gold_any, gold_type, found, strict=True):
            chars = covered_chars([d.span for d in doc if d.label == label and d.score >= threshold])
            hit += len(chars & any_chars)
            predicted += len(chars)
            covered += len(chars & type_chars)
        total = sum(map(len, gold_type))  # nothing predicted is no precision (0): a target is never met by silence
        curve.append((threshold, hit / predicted if predicted else 0.0, covered / total if total else 0.0))
    return curve


def choose(curve: Sequence[tuple[float, float, float]], target: float,
           measure: Literal["precision", "recall"] = "precision") -> Calibrated:
    """The threshold of ``curve`` (ascending thresholds) that meets a ``measure`` target (the module's rules)."""
    if measure == "precision":
        for threshold, precision, recall in curve:
            if precision >= target:
                return Calibrated(threshold, precision, recall, True)
        threshold, precision, recall = max(curve, key=lambda point: (point[1], -point[0]))
        return Calibrated(threshold, precision, recall, False)
    for threshold, precision, recall in reversed(curve):
        if recall >= target:
            return Calibrated(threshold, precision, recall, True)
    threshold, precision, recall = curve[0]
    return Calibrated(threshold, precision, recall, False)


def calibrate(corpora: Sequence[tuple[Sequence[Sequence[Span]], Sequence[Sequence[Detection]]]], label: str,
              target: float, measure: Literal["precision", "recall"], grid: Sequence[float] = GRID) -> Calibrated:
    """One type's threshold over several annotated corpora (``(gold, found)`` each, :func:`type_curve`'s inputs).

    A precision target holds on them pooled. A recall target holds on each corpus that has a gold span of the
    type: the lowest of their thresholds (a name missed in court transcripts is not made up for by tweets), its
    figures reported pooled, ``reached`` only when every corpus reached it.
    """
    pooled = type_curve([doc for gold, _ in corpora for doc in gold], [doc for _, found in corpora for doc in found],
                        label, grid)
    if measure == "precision":
        return choose(pooled, target)
    each = [choose(type_curve(gold, found, label, grid), target, "recall") for gold, found in corpora
            if any(s.label == label for doc in gold for s in doc)]
    if not each:
        raise ValueError(f"no corpus has a gold {label} span to keep a recall target on")
    threshold = min(c.threshold for c in each)
    _, precision, recall = next(point for point in pooled if point[0] == threshold)
    return Calibrated(threshold, precision, recall, all(c.reached for c in each))


def targets(params: CalibrationParams) -> dict[str, tuple[Literal["precision", "recall"], float]]:
    """Type -> (measure, target) of ``detectors.calibration``, sorted by type."""
    out: dict[str, tuple[Literal["precision", "recall"], float]] = {
        **{label: ("recall", t) for label, t in params.recall.items()},
        **{label: ("precision", t) for label, t in params.precision.items()}}
    return dict(sorted(out.items()))
