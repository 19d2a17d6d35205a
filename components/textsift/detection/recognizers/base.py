"""What every recognizer returns and how it is called (METHODS.md §4.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from textsift.corpus import Span


@dataclass(frozen=True, order=True)
class Detection:
    """A span one or more recognizers found: ``text[start:end]`` is personal data of type ``label``.

    Attributes:
        start, end: character offsets into the text.
        label: the entity type (DPER's names: PERSON, LOC, ORG, DATE, EMAIL, PHONE, ID, URL, ...).
        score: the confidence in [0, 1] (the highest of the recognizers that found it).
        source: who found it, ``+``-joined and sorted when several did (``model+patterns``).
    """

    start: int
    end: int
    label: str
    score: float
    source: str

    @property
    def span(self) -> Span:
        """The detection as a corpus :class:`~textsift.corpus.Span` (offsets and label; no score or source)."""
        return Span(self.start, self.end, self.label)


class Recognizer(Protocol):
    """Finds spans of its ``labels`` in texts; pure with respect to its inputs."""

    name: str
    labels: tuple[str, ...]

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text (same order), the detections scoring at least ``min_score``."""
        ...
