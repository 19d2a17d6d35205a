"""The trained DPER detector as a recognizer (METHODS.md §4.1): its GlobalPointer confidences."""

from __future__ import annotations

from collections.abc import Sequence

from textsift.detection.recognizers.base import Detection
from textsift.detection.titles import without_titles
from textsift.models.detector import Detector, detect_scored


class ModelRecognizer:
    """Spans of the trained detector, confidence the logistic of the span score (0.5 = trained threshold).

    Args:
        detector: a trained or loaded detector.
        batch_size: windows per forward pass (default the detector's ``inference_batch_size``).
    """

    name = "model"

    def __init__(self, detector: Detector, batch_size: int | None = None) -> None:
        self.detector = detector
        self.batch_size = batch_size
        self.labels = tuple(detector.labels)

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, the detector's spans whose confidence (logistic of the span score) reaches ``min_score``; a
        PERSON span without its leading title, none that is a title alone (:mod:`textsift.detection.titles`)."""
        found = detect_scored(self.detector, texts, self.batch_size, min_confidence=min_score)
        out = []
        for text, doc in zip(texts, found, strict=True):  # a person's span starts after its title (.titles)
            spans = (without_titles(text, Detection(s.start, s.end, s.label, score, self.name))
                     for s, score in doc if score >= min_score)
            out.append([d for d in spans if d is not None])
        return out
