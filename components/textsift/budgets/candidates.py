"""Sensitive-word replacement (step 1) and masked-LM candidate sentences (step 2) of METHODS.md §3.

Step 1: a sensitive word that does not matter for the task is replaced by a neutral filler
(:func:`neutral_fill`). Step 2: a sensitive word that matters is masked — its characters become one
``[MASK]`` — and the fill-in masked LM proposes its k most probable whole-word fillers; each gives one
candidate sentence of the set S_p (:func:`candidate_sentences`, :func:`candidate_sets`), whose embeddings
then yield the sensitivity Δf_d (:mod:`textsift.budgets.sensitivity`).

A filler is a whole vocabulary word: no special token, no ``[unused]`` entry, no ``##`` continuation
piece, no token without a letter or digit, and never the masked word itself (nor, for a span of several
words, one of its words), compared case-insensitively. The choice is deterministic: the k highest
logits, ties broken by the lower token id. Text before and after the span is tokenized separately
(``[MASK]`` written literally in a text stays text), and a text longer than the model window is cut to a
window centred on the mask, as DataSifterText's sequential fill does (METHODS.md §1.3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch

from textsift.corpus import Span
from textsift.mechanisms.protected_spans import outermost
from textsift.models.fill_in import FillInModel, logits_at
from textsift.tokenize import words

CharRange = tuple[int, int]  # text[start:end] (a plain pair; corpus.CharSpan is any object with start and end)
_WORDLIKE = re.compile(r"\w")


def neutral_fill(text: str, spans: Sequence[CharRange], filler: str = "something") -> str:
    """Replace each sensitive span by a neutral filler (METHODS.md §3 step 1).

    Overlapping and nested spans are merged into their outermost region first, so each region gets one
    filler; adjacent spans (one ends where the next starts) stay separate and get one filler each.
    Replacement runs right to left, so earlier offsets stay valid.

    Args:
        text: The sentence or document.
        spans: Character spans ``(start, end)`` of the task-irrelevant sensitive words, any order.
        filler: The neutral replacement.

    Returns:
        The text with every (merged) span replaced; ``text`` itself when ``spans`` is empty.

    Raises:
        ValueError: a span is empty or falls outside the text.
    """
    for start, end in spans:
        _check_span(text, (start, end))
    regions = outermost(Span(start, end, "") for start, end in spans)
    out = text
    for region in reversed(regions):
        out = out[:region.start] + filler + out[region.end:]
    return out


def _check_span(text: str, span: CharRange) -> None:
    start, end = span
    if not 0 <= start < end <= len(text):
        raise ValueError(f"span {span} is empty or outside a text of {len(text)} characters")


def _surface(texts: Sequence[str], owner: tuple[int, CharRange]) -> str:
    text, (start, end) = texts[owner[0]], owner[1]
    return text[start:end]


def _filler_ids(fill_in: FillInModel) -> torch.Tensor:
    """Boolean mask over the vocabulary: the whole-word tokens a candidate may use."""
    size = int(fill_in.model.config.vocab_size)
    tokens = fill_in.tokenizer.convert_ids_to_tokens(list(range(size)))
    special = set(fill_in.tokenizer.all_special_ids)
    allowed = [bool(t) and i not in special and not t.startswith("##") and not (t.startswith("[") and t.endswith("]"))
               and bool(_WORDLIKE.search(t)) for i, t in enumerate(tokens)]
    return torch.tensor(allowed, dtype=torch.bool)


def _casefold_index(fill_in: FillInModel, allowed: torch.Tensor) -> dict[str, list[int]]:
    """Case-folded form -> ids of the allowed tokens with that form (a cased vocabulary may hold several)."""
    index: dict[str, list[int]] = {}
    flags = allowed.tolist()
    for token, i in fill_in.tokenizer.get_vocab().items():
        if i < len(flags) and flags[i]:
            index.setdefault(token.casefold(), []).append(i)
    return index


def _excluded(index: dict[str, list[int]], original: str) -> list[int]:
    """Ids of the allowed tokens equal (case-insensitively) to the masked text or one of its words."""
    forms = {original.strip().casefold()} | {w.text.casefold() for w in words(original)}
    return sorted(i for form in forms for i in index.get(form, []))


def _windows(fill_in: FillInModel, texts: list[str], spans: list[CharRange]) -> list[tuple[list[int], int]]:
    """Per masked span: the token ids of a window holding its one ``[MASK]``, and the mask's position."""
    tok = fill_in.tokenizer
    kwargs = {"add_special_tokens": False, "split_special_tokens": True}
    before = tok([t[:s] for t, (s, _) in zip(texts, spans, strict=True)], **kwargs)["input_ids"]
    after = tok([t[e:] for t, (_, e) in zip(texts, spans, strict=True)], **kwargs)["input_ids"]
    body = fill_in.window - 2
    out = []
    for left, right in zip(before, after, strict=True):
        ids = [*left, tok.mask_token_id, *right]
        start = min(max(0, len(left) - body // 2), max(0, len(ids) - body))
        out.append((ids[start:start + body], len(left) - start))
    return out


def _top_fillers(logits: torch.Tensor, allowed: torch.Tensor, excluded: list[list[int]], top_k: int) -> list[list[int]]:
    """The ``top_k`` best allowed ids per row, best first, ties by lower id (fewer if the vocabulary runs out)."""
    scores = logits.masked_fill(~allowed, float("-inf"))
    for row, ids in enumerate(excluded):
        if ids:
            scores[row, torch.tensor(ids, dtype=torch.long)] = float("-inf")
    values, order = torch.sort(scores, dim=-1, descending=True, stable=True)
    values, order = values[:, :top_k], order[:, :top_k]
    return [[i for i, v in zip(ids, vals, strict=True) if v != float("-inf")]
            for ids, vals in zip(order.tolist(), values.tolist(), strict=True)]


def candidate_sets(texts: Sequence[str], spans_per_text: Sequence[Sequence[CharRange]], fill_in: FillInModel,
                   top_k: int, batch_size: int = 64) -> list[list[list[str]]]:
    """Candidate sentences S_p for every sensitive span of every text (METHODS.md §3 step 2).

    Each span is masked on its own (the other spans of the text stay as written) and gives one row of
    a forward pass; ``batch_size`` rows run together, grouped by window length. The result does not
    depend on ``batch_size`` beyond float32 rounding of near-tied logits.

    Args:
        texts: Sentences or documents. Not mutated.
        spans_per_text: Per text, the character spans ``(start, end)`` of its task-relevant sensitive words.
        fill_in: The fill-in masked LM (its device is used), in eval mode.
        top_k: Candidates per span (>= 1).
        batch_size: Masked spans per forward pass (>= 1).

    Returns:
        ``out[i][j]``: the candidate sentences of span j of text i — ``texts[i]`` with the span replaced
        by each of the ``top_k`` most probable fillers, most probable first (fewer when fewer remain).

    Raises:
        ValueError: ``top_k`` or ``batch_size`` < 1, lengths differ, or a span is empty or out of range.
    """
    if top_k < 1 or batch_size < 1:
        raise ValueError(f"top_k and batch_size must be >= 1, got {top_k} and {batch_size}")
    if len(texts) != len(spans_per_text):
        raise ValueError(f"got {len(spans_per_text)} span lists for {len(texts)} texts")
    owners = [(i, span) for i, spans in enumerate(spans_per_text) for span in spans]
    for i, span in owners:
        _check_span(texts[i], span)
    allowed = _filler_ids(fill_in)
    vocab = fill_in.tokenizer.convert_ids_to_tokens(list(range(allowed.numel())))
    index = _casefold_index(fill_in, allowed)
    windows = _windows(fill_in, [texts[i] for i, _ in owners], [span for _, span in owners]) if owners else []
    fillers: list[list[int]] = [[] for _ in owners]
    order = sorted(range(len(owners)), key=lambda r: -len(windows[r][0]))  # stable: less padding per batch
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        logits = logits_at(fill_in, [windows[r][0] for r in chunk], list(range(len(chunk))),
                           [windows[r][1] for r in chunk]).cpu()
        excluded = [_excluded(index, _surface(texts, owners[r])) for r in chunk]
        for r, ids in zip(chunk, _top_fillers(logits, allowed, excluded, top_k), strict=True):
            fillers[r] = ids
    out: list[list[list[str]]] = [[] for _ in texts]
    for (i, (s, e)), ids in zip(owners, fillers, strict=True):
        out[i].append([texts[i][:s] + vocab[t] + texts[i][e:] for t in ids])
    return out


def candidate_sentences(text: str, span: CharRange, fill_in: FillInModel, top_k: int) -> list[str]:
    """The candidate sentences S_p of one masked sensitive span (METHODS.md §3 step 2).

    Args:
        text: The sentence or document.
        span: Character span ``(start, end)`` of the sensitive word; its characters become one ``[MASK]``.
        fill_in: The fill-in masked LM, in eval mode.
        top_k: Number of fillers (>= 1).

    Returns:
        ``text`` with ``text[start:end]`` replaced by each of the ``top_k`` most probable whole-word fillers
        (never the original word), most probable first; fewer when the vocabulary has fewer.
    """
    return candidate_sets([text], [[span]], fill_in, top_k, batch_size=1)[0][0]
