"""A text with the privacy spans people (or a generator) marked in it: the detector's example, from every source
(synthetic sentences, BTC, WNUT-17, GUM), in a module of its own so that reading a real corpus does not load the
synthetic generator."""

from __future__ import annotations

from dataclasses import dataclass

from textsift.corpus import Span


@dataclass(frozen=True)
class LabelledText:
    """A text with its privacy spans (``text[start:end]`` is an entity of type ``label``).

    Spans may nest or overlap; they are sorted by (start, -end, label).
    """

    text: str
    spans: tuple[Span, ...] = ()

    def __post_init__(self) -> None:
        for span in self.spans:
            if not 0 <= span.start < span.end <= len(self.text):
                raise ValueError(f"span ({span.start}, {span.end}, {span.label}) is outside a text "
                                 f"of {len(self.text)} characters or empty")
