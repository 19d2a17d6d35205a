"""Choosing the token for a [MASK] from the fill-in model's scores (METHODS.md §1.3).

``sample`` draws from P(w_t | W_i) (``temperature``, optional ``top_k``) by inverting its CDF
at a uniform that the caller drew from the document's own generator, so a draw never depends
on which other documents share the batch. ``top1`` takes the most likely token, as the
reference code does. Only whole-word tokens are candidates: no ``##`` continuation piece and
no special token (so no [UNK] and no [MASK]); ``top1`` also skips punctuation, as the reference
code does. No candidate is personal data of a training document: the vocabulary is learned only
from words used outside privacy spans by ``fill_in.min_doc_freq`` documents
(:mod:`textsift.models.wordpiece`), the rule of metric-DP's output words, so no filter is needed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

_WORDLIKE = re.compile(r"\w")


@dataclass(frozen=True)
class Candidates:
    """Boolean masks over the vocabulary: tokens ``sample`` and ``top1`` may produce."""

    whole_word: torch.Tensor
    wordlike: torch.Tensor

    @classmethod
    def from_vocab(cls, tokens: list[str], special_ids: list[int], device: str) -> Candidates:
        """From the id-ordered token strings of a WordPiece vocabulary (``""`` for an unused id)."""
        whole = torch.tensor([bool(t) and not t.startswith("##") for t in tokens], dtype=torch.bool)
        whole[torch.tensor(sorted(special_ids), dtype=torch.long)] = False
        wordlike = whole & torch.tensor([bool(_WORDLIKE.search(t)) for t in tokens], dtype=torch.bool)
        return cls(whole.to(device), wordlike.to(device))


def choose(
    logits: torch.Tensor, uniforms: torch.Tensor, candidates: Candidates, strategy: str,
    temperature: float = 1.0, top_k: int | None = None,
) -> torch.Tensor:
    """One token id per row of ``logits``.

    Args:
        logits: ``[n, vocab]`` scores at the masked positions (any float dtype).
        uniforms: ``[n]`` float64 uniforms in [0, 1), one per row (ignored by ``top1``).
        candidates: which tokens may be produced.
        strategy: ``"sample"`` or ``"top1"``.
        temperature: divides the logits before the softmax (``sample``).
        top_k: keep only the k most likely candidates before sampling (``sample``).
    """
    scores = logits.float()
    if strategy == "top1":
        return scores.masked_fill(~candidates.wordlike, float("-inf")).argmax(dim=-1)
    scores = (scores / temperature).masked_fill(~candidates.whole_word, float("-inf"))
    if top_k is not None and top_k < scores.shape[-1]:
        kth = scores.topk(top_k, dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    probs = torch.softmax(scores.double(), dim=-1)
    cdf = probs.cumsum(dim=-1)
    picked = torch.searchsorted(cdf, (uniforms.to(cdf.device) * cdf[:, -1]).unsqueeze(-1), right=True).squeeze(-1)
    last = probs.shape[-1] - 1 - (probs > 0).flip(-1).int().argmax(dim=-1)  # the last token with mass
    return torch.minimum(picked, last)
