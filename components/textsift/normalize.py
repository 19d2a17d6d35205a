"""Text normalization that keeps privacy spans pointing at the same characters.

Normalizing (NFC, ``<br />`` removal, whitespace collapsing) changes lengths, so the text is
normalized piecewise between span boundaries and the spans are re-computed from the piece
lengths: a span always covers the normalized form of the characters it covered before.
"""

from __future__ import annotations

import re
import unicodedata

from textsift.config import NormalizeParams
from textsift.corpus import Span

_HTML_BREAK = re.compile(r"<br\s*/?>", flags=re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")


def normalize_piece(text: str, params: NormalizeParams) -> str:
    """Normalize one piece of text (no span boundary inside it)."""
    if params.unicode_nfc:
        text = unicodedata.normalize("NFC", text)
    if params.strip_html_breaks:
        text = _HTML_BREAK.sub(" ", text)
    if params.collapse_whitespace:
        text = _WHITESPACE.sub(" ", text)
    return text


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
