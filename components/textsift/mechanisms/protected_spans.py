"""What a mechanism must protect in one document: its sensitive spans, made consistent.

A detector (or a gold annotation) marks a name once; the same document repeats it, or repeats
the bare surname ("John Smith called. ... Smith said"). Protecting only the marked occurrence
leaks the rest — the largest leak of Presidio-style de-identification. ``consistent_spans``
extends a document's spans to every case-insensitive, whole-word occurrence of each marked
string (whatever whitespace separates its words: the text is kept as given, so ``Ann Lee`` may
repeat as ``Ann\nLee``), and of each name part (two letters or more) of a PERSON span — a name part
that is also a stop word ("The" of a title the detector called a person, "Will", "May") only where it
is capitalized: replacing every "the" or "will" of a review destroys the text and protects nobody. ``outermost`` merges
overlapping spans (nested ones included) into the maximal regions a replacement must cover. Every span
covers whole characters as readers see them: a base letter with its combining marks, never half.

Pure functions on one text and its spans; every mechanism that protects detected spans
(DataSifterText's ``mask_detected``, metric-DP's ``replace_detected``, ``redact``) uses them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textsift.corpus import Span
from textsift.normalize import cut_at_breaks, whole_clusters
from textsift.tokenize import words
from textsift.word_lists import stop_words

NAME_LABELS = frozenset({"PERSON"})
_MIN_NAME_PART = 2


def _occurrences(text: str, surface: str, capitalized: bool = False) -> Iterable[tuple[int, int]]:
    """Whole-word, case-insensitive occurrences of ``surface`` in ``text``, any whitespace between its words; only
    those that begin with a capital letter when ``capitalized``."""
    body = r"\s+".join(re.escape(part) for part in surface.split())
    pattern = re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)
    return ((m.start(), m.end()) for m in pattern.finditer(text) if not capitalized or m.group()[0].isupper())


def consistent_spans(text: str, spans: Iterable[Span]) -> list[Span]:
    """``spans`` plus every other occurrence of what they mark, sorted by (start, -end).

    Args:
        text: the document.
        spans: its sensitive spans (gold or detected), possibly nested or overlapping.

    Returns:
        The original spans, the repeats of each span's surface text, and for PERSON spans the
        repeats of each name part (``Smith`` of ``John Smith``), each labelled like its source,
        each widened to whole clusters (:func:`textsift.normalize.whole_clusters`) and cut at the text's line
        breaks (:func:`textsift.normalize.cut_at_breaks`: a repeat of "Ann Lee" wrapped over two lines is "Ann" and
        "Lee", so replacing it keeps the line break).
    """
    found: dict[tuple[int, int], str] = {}
    surfaces: dict[str, str] = {}
    common: set[str] = set()  # name parts that are also stop words: repeated only where capitalized
    for span in spans:
        found.setdefault(whole_clusters(text, span.start, span.end), span.label)
        surface = " ".join(text[span.start:span.end].split())
        if surface:
            surfaces.setdefault(surface.casefold(), span.label)
        if span.label in NAME_LABELS:
            for part in words(surface):
                if len(part.text) >= _MIN_NAME_PART and part.text[0].isalpha():
                    folded = part.text.casefold()
                    surfaces.setdefault(folded, span.label)
                    if folded in stop_words() and folded != surface.casefold():
                        common.add(folded)
    for surface, label in surfaces.items():
        for start, end in _occurrences(text, surface, capitalized=surface in common):
            found.setdefault(whole_clusters(text, start, end), label)
    pieces: dict[tuple[int, int], str] = {}  # one label per extent, as above: the first span's
    for piece in cut_at_breaks(text, [Span(start, end, label) for (start, end), label in found.items()]):
        pieces.setdefault((piece.start, piece.end), piece.label)
    return [Span(start, end, label) for (start, end), label in sorted(pieces.items(), key=lambda i: (i[0][0], -i[0][1]))
            ]


def outermost(spans: Iterable[Span]) -> list[Span]:
    """Merge overlapping spans into maximal, disjoint regions, each labelled by its longest member."""
    merged: list[tuple[int, int, str, int]] = []  # start, end, label, length of the label's span
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start < merged[-1][1]:
            start, end, label, best = merged[-1]
            if span.end - span.start > best:
                label, best = span.label, span.end - span.start
            merged[-1] = (start, max(end, span.end), label, best)
        else:
            merged.append((span.start, span.end, span.label, span.end - span.start))
    return [Span(start, end, label) for start, end, label, _ in merged]
