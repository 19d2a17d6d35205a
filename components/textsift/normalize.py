"""Normalization for what models read, with a map back to the caller's text.

Stored and returned text is the caller's text: the offsets of spans, detections and replacements index it, and a
mechanism changes nothing outside the spans it replaces (as Presidio's anonymizer does). Models read a *view* of
it (params ``ingest.normalize``: NFC, ``<br />`` markup as a space, whitespace runs as one space), and
:class:`TextView` remembers which original characters each view character came from, so a span found in the
view maps back onto every original character it covers: a whole collapsed run, a whole tag, a whole base
character with its combining marks or surrogate pair (never half of one).

``normalize_text`` normalizes a text itself, spans moved along: only for ``ingest.normalize.output``.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TypeVar

from textsift.corpus import CharSpan, Span
from textsift.ingest_params import NormalizeParams
from textsift.tokenize import COMBINING_MARKS, HTML_BREAK

_WHITESPACE = re.compile(r"\s+")
_CONJOINING_JAMO = "\u1160-\u11ff\ud7b0-\ud7ff"  # Hangul vowels and finals: they compose with the syllable before
_SURROGATE_PAIR = "[\ud800-\udbff][\udc00-\udfff]"


def normalize_piece(text: str, params: NormalizeParams) -> str:
    """Normalize one piece of text (no span boundary inside it)."""
    if params.unicode_nfc:
        text = unicodedata.normalize("NFC", text)
    if params.strip_html_breaks:
        text = HTML_BREAK.sub(" ", text)
    if params.collapse_whitespace:
        text = _WHITESPACE.sub(" ", text)
    return text


def normalized_form(text: str, params: NormalizeParams) -> str:
    """The normalized text without outer whitespace: what de-duplication compares, and empty for an empty text."""
    return normalize_piece(text, params).strip()


def normalize_text(
    text: str, spans: tuple[Span, ...], params: NormalizeParams
) -> tuple[str, tuple[Span, ...]]:
    """Normalized text and spans moved to the same characters; outer whitespace stripped.

    Spans that fall outside the text are returned unchanged in position so validation can
    reject the record (they are not silently clipped).
    """
    valid = all(0 <= s.start < s.end <= len(text) for s in spans)
    if not valid:
        return text, spans
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    new_pos: dict[int, int] = {0: 0}
    pieces: list[str] = []
    total = 0
    for left, right in zip(cuts, cuts[1:], strict=False):
        piece = normalize_piece(text[left:right], params)
        pieces.append(piece)
        total += len(piece)
        new_pos[right] = total
    joined = "".join(pieces)
    lead = len(joined) - len(joined.lstrip())
    stripped = joined.strip()
    moved = []
    for s in spans:
        start = min(max(new_pos[s.start] - lead, 0), len(stripped))
        end = min(max(new_pos[s.end] - lead, 0), len(stripped))
        # whitespace collapsed at a span edge may leave a leading/trailing space inside it
        while start < end and stripped[start].isspace():
            start += 1
        while end > start and stripped[end - 1].isspace():
            end -= 1
        moved.append(Span(start, end, s.label))
    return stripped, tuple(moved)


Unit = tuple[int, int, int, int]
"""``(view start, view end, original start, original end)``: view characters that came from those original ones."""


@dataclass(frozen=True)
class TextView:
    """What a model reads of a text, and where each of its characters came from.

    Attributes:
        text: the view.
        units: in order, the stretches of the view that are not one original character each (a collapsed run, a
            tag, a cluster of a base and its combining marks, a character NFC composed or expanded); every other
            view character is the original character as far after the previous unit's original end as it is
            after that unit's view end.
    """

    text: str
    units: tuple[Unit, ...] = ()

    def origin(self, k: int) -> tuple[int, int]:
        """The original characters ``[start, end)`` that view character ``k`` came from."""
        i = bisect_right(self.units, k, key=_view_start) - 1
        if i < 0:
            return k, k + 1
        view_start, view_end, start, end = self.units[i]
        if k < view_end:
            return start, end
        return end + k - view_end, end + k - view_end + 1


def _view_start(unit: Unit) -> int:
    return unit[0]


_MARKS = COMBINING_MARKS + _CONJOINING_JAMO  # what continues a cluster
_CONTINUATION = re.compile(f"[{_MARKS}\udc00-\udfff]")


def whole_clusters(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened to whole clusters of ``text``: a span that begins on a combining mark (or a
    surrogate pair's second half) starts at its base, one followed by combining marks takes them along, so a
    replacement never leaves an accent on whatever it puts before it."""
    if text.isascii():
        return start, end
    while 0 < start < len(text) and _CONTINUATION.match(text, start):
        start -= 1
    while end < len(text) and _CONTINUATION.match(text, end):
        end += 1
    return start, end


@cache
def _pattern(strip_html_breaks: bool, collapse_whitespace: bool, clusters: bool) -> re.Pattern[str] | None:
    """What the view rewrites: group ``space`` becomes one space; group ``cluster`` (a base and its combining marks,
    a surrogate pair) is one unit, NFC-composed as a whole. None: nothing to rewrite."""
    breaks, spaces = rf"(?i:{HTML_BREAK.pattern})", r"\s"
    space = (rf"(?:{breaks}|{spaces})+" if strip_html_breaks and collapse_whitespace
             else breaks if strip_html_breaks else rf"{spaces}+" if collapse_whitespace else None)
    parts = [f"(?P<space>{space})"] if space else []
    if clusters:
        parts.append(f"(?P<cluster>[^{_MARKS}][{_MARKS}]+|{_SURROGATE_PAIR})")
    return re.compile("|".join(parts)) if parts else None


def _plain(text: str, at: int, size: int, nfc: bool, pieces: list[str], units: list[Unit]) -> int:
    """Append a stretch without clusters or spaces to rewrite, starting at original ``at`` and view ``size``: NFC
    character by character; return the view's new size."""
    if not nfc or text.isascii() or unicodedata.is_normalized("NFC", text):
        pieces.append(text)
        return size + len(text)
    for k, ch in enumerate(text):
        new = unicodedata.normalize("NFC", ch)
        if len(new) != 1:
            units.append((size, size + len(new), at + k, at + k + 1))
        pieces.append(new)
        size += len(new)
    return size


def model_view(text: str, params: NormalizeParams) -> TextView:
    """The view of ``text`` that models read (params ``ingest.normalize``) and its map back to ``text``.

    The view is ``normalize_piece(text)`` (outer whitespace not stripped) with NFC applied per cluster of a base and
    its combining marks, which only differs from whole-text NFC on unusual mark sequences; a text that needs
    nothing rewritten is its own view. Costs about a microsecond per character (non-ASCII text; less for ASCII).
    """
    pattern = _pattern(params.strip_html_breaks, params.collapse_whitespace, not text.isascii())
    if pattern is None:
        return TextView(text)
    pieces: list[str] = []
    units: list[Unit] = []
    cursor = size = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        size = _plain(text[cursor:start], cursor, size, params.unicode_nfc, pieces, units)
        piece = match.group()
        if match.lastgroup == "space":
            piece = " "
        elif params.unicode_nfc:
            piece = unicodedata.normalize("NFC", piece)
        if len(piece) != 1 or end - start != 1:
            units.append((size, size + len(piece), start, end))
        pieces.append(piece)
        size += len(piece)
        cursor = end
    _plain(text[cursor:], cursor, size, params.unicode_nfc, pieces, units)
    return TextView("".join(pieces), tuple(units))


def to_original(view: TextView, start: int, end: int) -> tuple[int, int] | None:
    """The original span of the view span ``[start, end)``: from the first original character of its first
    non-space view character to the last of its last one (whitespace at its edges, a collapsed run or a tag, is left
    out); None when it holds nothing else.

    Raises:
        ValueError: a span outside the view (its offsets only, never its text).
    """
    if not 0 <= start <= end <= len(view.text):
        raise ValueError(f"span [{start}, {end}) is outside a view of {len(view.text)} characters")
    while start < end and view.text[start].isspace():
        start += 1
    while end > start and view.text[end - 1].isspace():
        end -= 1
    if start == end:
        return None
    return view.origin(start)[0], view.origin(end - 1)[1]


# what ends a span in the caller's text whatever a model read across it: a line break (what str.splitlines splits
# at) or an HTML line-break tag, both a space in the model view
BREAKS = re.compile(rf"(?:[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]|{HTML_BREAK.pattern})+", re.IGNORECASE)
S = TypeVar("S", bound=CharSpan)  # corpus.Span, a recognizer's Detection: frozen dataclasses


def cut_at_breaks(text: str, spans: Sequence[S]) -> list[S]:
    """``spans`` of ``text`` cut at its line breaks and ``<br />`` tags (:data:`BREAKS`).

    Each piece with a letter or digit, without the whitespace at its ends, keeps the span's other fields (type,
    score, finder); a span with no break inside stays as it is. The pieces cover the same words, so protection is
    the same, and a replacement never swallows the caller's line structure.
    """
    out: list[S] = []
    for span in spans:
        breaks = list(BREAKS.finditer(text, span.start, span.end))
        if not breaks:
            out.append(span)
            continue
        bounds = [span.start, *(x for m in breaks for x in (m.start(), m.end())), span.end]
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            piece = text[start:end]
            if any(c.isalnum() for c in piece):
                lead = len(piece) - len(piece.lstrip())
                out.append(replace(span, start=start + lead, end=start + len(piece.rstrip())))
    return out
