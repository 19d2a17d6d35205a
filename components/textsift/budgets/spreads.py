"""Per-word candidate spreads over the corpus, the input of Δf_d (METHODS.md §3 step 2).

For each sampled sensitive word the fill-in model proposes its top-k fillers (:mod:`textsift.budgets.candidates`),
the sentence encoder embeds the resulting sentences, and :func:`~textsift.budgets.sensitivity.cluster_spread` takes
the per-dimension spread inside each k-medoids cluster. Only ``lrp_budgets`` runs this step: it loads the fill-in
model's code (transformers), which publishing and judging the embeddings never need.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from textsift.budgets.candidates import CharRange, candidate_sets
from textsift.budgets.params import SensitivityParams
from textsift.budgets.sensitivity import cluster_spread
from textsift.budgets.sentence_encoder import SentenceEncoder, encode
from textsift.models.fill_in import FillInModel


def word_spreads(encoder: SentenceEncoder, fill_in: FillInModel, texts: Sequence[str],
                 words: Sequence[tuple[int, CharRange]], params: SensitivityParams, seed: int,
                 batch_size: int, max_length: int) -> np.ndarray:
    """Per-word candidate spread (§3 step 2): mask each word, top-k fillers, embed, k-medoids, max − min.

    Args:
        encoder: The sentence encoder whose embeddings are published.
        fill_in: The corpus-trained masked LM that proposes the fillers.
        texts: The (step-1) documents the words point into.
        words: ``(text index, span)`` of each sampled sensitive word.
        params: ``top_k``, ``n_clusters``.
        seed: Seed of k-medoids.
        batch_size, max_length: Of the encoder.

    Returns:
        One spread row per word with at least two candidates, shape [n, dim], float64.
    """
    spans_per_text: list[list[CharRange]] = [[] for _ in texts]
    for i, span in words:
        spans_per_text[i].append(span)
    sets = [s for per_text in candidate_sets(texts, spans_per_text, fill_in, params.top_k) for s in per_text]
    sets = [s for s in sets if len(s) >= 2]
    if not sets:
        return np.zeros((0, encoder.dim), dtype=np.float64)
    flat = encode(encoder, [sentence for s in sets for sentence in s], batch_size, max_length)
    spreads, start = [], 0
    for candidates in sets:
        spreads.append(cluster_spread(flat[start:start + len(candidates)], params.n_clusters, seed))
        start += len(candidates)
    return np.stack(spreads)
