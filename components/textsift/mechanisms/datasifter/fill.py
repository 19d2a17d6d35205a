"""DataSifterText fill-in, Algorithm 1 lines 24-31 (METHODS.md §1.3).

Each masked word becomes one [MASK] for the fill-in model; the text between words (punctuation)
stays in the model input as context. ``fill_order: sequential`` fills the masks of a document
left to right, each from a window centred on it that already holds the earlier fills (Algorithm
1 as written); ``parallel`` fills every mask from one pass over fixed overlapping windows, each
mask read from the window where it sits farthest from an edge. Work is batched across documents
(windows padded to the batch's longest; in sequential order the j-th mask of every document of
the batch is filled at once), and every draw uses a uniform from the document's own generator,
so the output does not depend on batch size or batch composition. Inference runs in float32 on
every device: bf16 rounding would differ with the batch's shape and flip draws near a boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sampling import Candidates, choose
from textsift.models.fill_in import FillInModel, logits_at
from textsift.tokenize import Token


@dataclass(frozen=True)
class FillOptions:
    """How masks are filled: strategy, order and batching (from a DataSifter setting)."""

    strategy: str = "sample"
    temperature: float = 1.0
    top_k: int | None = None
    order: str = "sequential"
    batch_size: int = 64
    overlap: int = 32

    @classmethod
    def from_setting(cls, setting: DataSifterSetting) -> FillOptions:
        """The fill options of a DataSifter setting: strategy, temperature, top-k, order, batching (§1.3)."""
        return cls(setting.fill_strategy, setting.temperature, setting.top_k, setting.fill_order,
                   setting.fill_batch_size, setting.window_overlap)


@dataclass
class _Doc:
    ids: list[int]
    masks: list[int]  # positions of the [MASK] ids, left to right
    uniforms: torch.Tensor  # one float64 uniform per mask
    chosen: list[int] = field(default_factory=list)


def _pieces(text: str, tokens: Sequence[Token], masked: np.ndarray) -> tuple[list[str], list[bool]]:
    """Words and the non-space text between them, each a pre-split piece; which pieces are masks."""
    pieces, is_mask, cursor = [], [], 0
    for token, flag in zip(tokens, masked.tolist(), strict=True):
        gap = text[cursor:token.start].strip()
        if gap:
            pieces.append(gap)
            is_mask.append(False)
        pieces.append(token.text)
        is_mask.append(flag)
        cursor = token.end
    if text[cursor:].strip():
        pieces.append(text[cursor:].strip())
        is_mask.append(False)
    return pieces, is_mask


def encode(texts: Sequence[str], tokens: Sequence[Sequence[Token]], masks: Sequence[np.ndarray],
           fm: FillInModel) -> list[tuple[list[int], list[int]]]:
    """Token ids of each document with one [MASK] id per masked word, and the masks' positions."""
    split = [_pieces(t, toks, m) for t, toks, m in zip(texts, tokens, masks, strict=True)]
    batch = fm.tokenizer([p for p, _ in split], is_split_into_words=True, add_special_tokens=False,
                         split_special_tokens=True)
    mask_id = fm.tokenizer.mask_token_id
    out = []
    for b, (_, is_mask) in enumerate(split):
        by_piece: list[list[int]] = [[] for _ in is_mask]
        for token_id, piece in zip(batch["input_ids"][b], batch.word_ids(b), strict=True):
            by_piece[piece].append(token_id)
        ids: list[int] = []
        positions: list[int] = []
        for piece_ids, flag in zip(by_piece, is_mask, strict=True):
            if flag:
                positions.append(len(ids))
                ids.append(mask_id)
            else:
                ids.extend(piece_ids)
        out.append((ids, positions))
    return out


def _chunks(items: list[int], size: int) -> list[list[int]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _fill_sequential(fm: FillInModel, docs: list[_Doc], options: FillOptions, candidates: Candidates) -> None:
    body = fm.window - 2
    order = sorted(range(len(docs)), key=lambda d: -len(docs[d].masks))  # stable: ties keep row order
    for chunk in _chunks(order, options.batch_size):
        for j in range(len(docs[chunk[0]].masks)):
            active = [d for d in chunk if len(docs[d].masks) > j]
            windows, cols = [], []
            for d in active:
                ids, p = docs[d].ids, docs[d].masks[j]
                start = min(max(0, p - body // 2), max(0, len(ids) - body))
                windows.append(ids[start:start + body])
                cols.append(p - start)
            logits = logits_at(fm, windows, list(range(len(active))), cols)
            uniforms = torch.stack([docs[d].uniforms[j] for d in active])
            picked = choose(logits, uniforms, candidates, options.strategy, options.temperature, options.top_k)
            for d, token_id in zip(active, picked.tolist(), strict=True):
                docs[d].ids[docs[d].masks[j]] = token_id
                docs[d].chosen.append(token_id)


def window_starts(n: int, body: int, overlap: int) -> list[int]:
    """Starts of windows of ``body`` tokens covering ``n`` tokens, consecutive ones sharing ``overlap``."""
    starts = [0]
    while starts[-1] + body < n:
        starts.append(min(starts[-1] + body - overlap, n - body))
    return starts


def _parallel_units(doc: _Doc, body: int, overlap: int) -> list[tuple[int, list[int]]]:
    """``(window start, mask indices)`` per window: each mask goes where it is farthest from an edge."""
    starts = window_starts(len(doc.ids), body, overlap)
    assigned: dict[int, list[int]] = {}
    for k, p in enumerate(doc.masks):
        inside = [s for s in starts if s <= p < s + body]
        best = max(inside, key=lambda s: (min(p - s, s + body - 1 - p), -s))
        assigned.setdefault(best, []).append(k)
    return sorted(assigned.items())


def _fill_parallel(fm: FillInModel, docs: list[_Doc], options: FillOptions, candidates: Candidates) -> None:
    body = fm.window - 2
    if not 0 <= options.overlap < body:
        raise ValueError(f"window_overlap must be in [0, {body}) for a model window of {fm.window} tokens")
    units = [(d, s, ks) for d, doc in enumerate(docs) for s, ks in _parallel_units(doc, body, options.overlap)]
    units.sort(key=lambda u: -min(body, len(docs[u[0]].ids) - u[1]))  # long windows together: less padding
    for doc in docs:
        doc.chosen = [0] * len(doc.masks)
    for chunk in _chunks(list(range(len(units))), options.batch_size):
        windows, rows, cols, owners = [], [], [], []
        for b, u in enumerate(chunk):
            d, start, ks = units[u]
            windows.append(docs[d].ids[start:start + body])
            for k in ks:
                rows.append(b)
                cols.append(docs[d].masks[k] - start)
                owners.append((d, k))
        logits = logits_at(fm, windows, rows, cols)
        uniforms = torch.stack([docs[d].uniforms[k] for d, k in owners])
        picked = choose(logits, uniforms, candidates, options.strategy, options.temperature, options.top_k)
        for (d, k), token_id in zip(owners, picked.tolist(), strict=True):
            docs[d].chosen[k] = token_id


def fill_documents(
    texts: Sequence[str], tokens: Sequence[Sequence[Token]], masks: Sequence[np.ndarray], fm: FillInModel,
    options: FillOptions, seeds: Sequence[int],
) -> list[list[str]]:
    """The fill-in word for every masked token, per document, left to right.

    Args:
        texts: the documents.
        tokens: their word tokens (``textsift.tokenize.words``).
        masks: per document, which word tokens are masked.
        fm: the fill-in model (its device is used).
        options: strategy, order, batch size, window overlap.
        seeds: per document, the seed of its ``torch.Generator`` (``rng.torch_seed``).

    Returns:
        Whole vocabulary words (no ``##`` piece, no special token), one per masked token.
    """
    docs = []
    for (ids, positions), seed in zip(encode(texts, tokens, masks, fm), seeds, strict=True):
        gen = torch.Generator().manual_seed(seed)
        docs.append(_Doc(ids, positions, torch.rand(len(positions), generator=gen, dtype=torch.float64)))
    ids = list(range(fm.model.config.vocab_size))
    vocab = [t or "" for t in fm.tokenizer.convert_ids_to_tokens(ids)]
    candidates = Candidates.from_vocab(vocab, fm.tokenizer.all_special_ids, fm.device)
    fill = _fill_sequential if options.order == "sequential" else _fill_parallel
    if any(doc.masks for doc in docs):
        fill(fm, [doc for doc in docs if doc.masks], options, candidates)
    return [[vocab[i] for i in doc.chosen] for doc in docs]
