"""Texts as token windows with character offsets, and spans to and from window positions (METHODS.md §4.1).

A text is tokenized once (fast tokenizer, ``offset_mapping``) and cut into windows of
``max_length`` tokens, ``[CLS] body [SEP]``; consecutive windows share ``stride`` tokens. Each
window *owns* the tokens from the middle of its overlap with the previous window to the middle
of its overlap with the next one, and reports only the spans that start on a token it owns: a
span crossing a window border is found once, by the window that sees it whole (spans up to
``stride / 2`` tokens long). Positions inside a window are sequence positions: ``0`` is
``[CLS]``, the body is ``1 .. n``. Character offsets index the original text, so a detected span
is ``text[start:end]`` exactly (whitespace trimmed).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from textsift.corpus import Span
from textsift.models.detector_encoders import token_shapes
from textsift.models.global_pointer import TokenSpan

Offsets = list[tuple[int, int]]


@dataclass(frozen=True)
class Encoded:
    """A tokenized text: token ids, character offsets and the index of the word each token is part of
    (the tokenizer's pre-tokenized words: a word's later pieces, like ``##sat``, continue it)."""

    ids: list[int]
    offsets: Offsets
    words: list[int]

    def starts(self) -> list[bool]:
        """Per token: it begins a word (a span may start there)."""
        return [t == 0 or self.words[t] != self.words[t - 1] for t in range(len(self.ids))]

    def ends(self) -> list[bool]:
        """Per token: it ends a word (a span may end there)."""
        n = len(self.ids)
        return [t == n - 1 or self.words[t + 1] != self.words[t] for t in range(n)]


@dataclass(frozen=True)
class Window:
    """One model input cut from text ``text_index``.

    Attributes:
        text_index: which input text.
        input_ids: ``[CLS] body [SEP]`` token ids.
        shapes: character-shape index per position (0 at ``[CLS]`` and ``[SEP]``).
        offsets: character offsets of the body tokens (position ``p`` -> ``offsets[p - 1]``).
        starts, ends: per body token, whether a span may start / end on it (word boundaries).
        first: index in the text's token list of the first body token.
        own: positions ``[a, b)`` whose spans (by first position) this window reports.
    """

    text_index: int
    input_ids: tuple[int, ...]
    shapes: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    starts: tuple[bool, ...]
    ends: tuple[bool, ...]
    first: int
    own: tuple[int, int]


def tokenize(tokenizer: Any, texts: Sequence[str]) -> list[Encoded]:
    """Each text's tokens without special tokens, with offsets and word indices."""
    if not texts:
        return []
    enc = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True, return_attention_mask=False,
                    return_token_type_ids=False, verbose=False)
    out = []
    for row, (ids, offsets) in enumerate(zip(enc["input_ids"], enc["offset_mapping"], strict=True)):
        words = [t if w is None else w for t, w in enumerate(enc.word_ids(row))]
        out.append(Encoded(list(ids), [(int(a), int(b)) for a, b in offsets], words))
    return out


def word_shapes(text: str, encoded: Encoded) -> list[int]:
    """Per token, the character shape of the whole word it is part of (``Kasator`` for ``##sat``)."""
    span: dict[int, tuple[int, int]] = {}
    for word, (start, end) in zip(encoded.words, encoded.offsets, strict=True):
        first = span.get(word, (start, end))
        span[word] = (min(first[0], start), max(first[1], end))
    shapes = dict(zip(span, token_shapes(text, list(span.values())), strict=True))
    return [shapes[w] for w in encoded.words]


def make_windows(tokenizer: Any, texts: Sequence[str], max_length: int, stride: int,
                 encoded: Sequence[Encoded] | None = None) -> list[Window]:
    """All windows of all texts, text by text; a text without tokens gives none.

    Args:
        tokenizer: a fast tokenizer with ``[CLS]``/``[SEP]`` tokens.
        texts: the input texts.
        max_length: tokens per window, special tokens included.
        stride: tokens shared by consecutive windows (at most half the body).
        encoded: ``tokenize(tokenizer, texts)`` when the caller has it already.
    """
    body = max_length - 2
    step = body - stride
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    encoded = tokenize(tokenizer, texts) if encoded is None else encoded
    windows = []
    for index, (text, enc) in enumerate(zip(texts, encoded, strict=True)):
        shapes, starts, ends, total = word_shapes(text, enc), enc.starts(), enc.ends(), len(enc.ids)
        a = 0
        while a < total:
            n = min(body, total - a)
            last = a + n == total
            own_from = 1 if a == 0 else 1 + stride // 2
            own_to = n + 1 if last else n + 1 - (stride - stride // 2)
            cut = slice(a, a + n)
            windows.append(Window(index, (cls, *enc.ids[cut], sep), (0, *shapes[cut], 0), tuple(enc.offsets[cut]),
                                  tuple(starts[cut]), tuple(ends[cut]), a, (own_from, own_to)))
            a = total if last else a + step
    return windows


def text_token_spans(encoded: Encoded, spans: Sequence[Span], types: Mapping[str, int]) -> list[TokenSpan]:
    """Gold character spans as ``(type, first token, last token)`` of the whole text.

    A span covers every token its characters overlap, widened to whole words (a model span
    starts and ends on word boundaries); spans of unknown types or covering no token (e.g.
    whitespace only) are left out.
    """
    starts = [s for s, _ in encoded.offsets]
    ends = [e for _, e in encoded.offsets]
    word_first: dict[int, int] = {}
    word_last: dict[int, int] = {}
    for t, w in enumerate(encoded.words):
        word_first.setdefault(w, t)
        word_last[w] = t
    out = []
    for span in spans:
        if span.label not in types:
            continue
        i = bisect.bisect_right(ends, span.start)
        j = bisect.bisect_left(starts, span.end) - 1
        if i <= j:
            out.append((types[span.label], word_first[encoded.words[i]], word_last[encoded.words[j]]))
    return out


def window_targets(window: Window, token_spans: Sequence[TokenSpan]) -> list[TokenSpan]:
    """The text's token spans that lie wholly inside the window, in window positions."""
    n = len(window.offsets)
    return [(c, i - window.first + 1, j - window.first + 1) for c, i, j in token_spans
            if window.first <= i and j < window.first + n]


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` without leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def window_spans(window: Window, found: Sequence[TokenSpan], labels: Sequence[str], text: str) -> list[Span]:
    """Character spans of the window's detections that start on a token it owns (empty ones dropped)."""
    return [span for span, _ in window_scored_spans(window, found, [1.0] * len(found), labels, text)]


def window_scored_spans(window: Window, found: Sequence[TokenSpan], scores: Sequence[float], labels: Sequence[str],
                        text: str) -> list[tuple[Span, float]]:
    """:func:`window_spans` with each detection's score (``scores[k]`` belongs to ``found[k]``)."""
    out = []
    for (c, i, j), score in zip(found, scores, strict=True):
        if window.own[0] <= i < window.own[1] and 1 <= i <= j <= len(window.offsets):
            start, end = trim(text, window.offsets[i - 1][0], window.offsets[j - 1][1])
            if start < end:
                out.append((Span(start, end, labels[c]), score))
    return out


def collate(windows: Sequence[Window], device: str, pad_id: int = 0) -> dict[str, torch.Tensor]:
    """Padded tensors of a batch of windows (``pad_id``: the tokenizer's padding token).

    Returns:
        ``input_ids``, ``attention_mask`` (real positions, special tokens included), ``shapes``,
        ``body_mask`` (the text's tokens), ``start_mask`` and ``end_mask`` (body tokens a span may
        start / end on), all ``[batch, length]``.
    """
    width = max(len(w.input_ids) for w in windows)  # one tensor per field from padded rows: no per-row copies
    rows = [(w, width - len(w.input_ids)) for w in windows]
    ids = torch.tensor([[*w.input_ids, *[pad_id] * k] for w, k in rows], dtype=torch.long)
    shapes = torch.tensor([[*w.shapes, *[0] * k] for w, k in rows], dtype=torch.long)
    attention = torch.tensor([[1] * len(w.input_ids) + [0] * k for w, k in rows], dtype=torch.long)
    body = torch.tensor([[False, *[True] * len(w.offsets), *[False] * (k + 1)] for w, k in rows], dtype=torch.bool)
    start = torch.tensor([[False, *w.starts, *[False] * (k + 1)] for w, k in rows], dtype=torch.bool)
    end = torch.tensor([[False, *w.ends, *[False] * (k + 1)] for w, k in rows], dtype=torch.bool)
    tensors = {"input_ids": ids, "attention_mask": attention, "shapes": shapes, "body_mask": body,
               "start_mask": start, "end_mask": end}
    return {k: v.to(device) for k, v in tensors.items()}
