"""The corpus-level fit shared by every embedding setting: Δf_d (step 2) and relevance r_d (step 3), METHODS.md §3.

:func:`word_spreads` turns sampled sensitive words into per-dimension candidate spreads; :func:`fit_relevance`
trains the MLP on clean (step-1) training embeddings, takes LRP-ε relevance and fits the relevance regressor
that stands in for labels at publish time; :func:`classify` is the same MLP used as the downstream classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.linear_model import Ridge

from textsift import rng
from textsift.budgets.candidates import CharSpan, candidate_sets
from textsift.budgets.lrp import MLPClassifier, fit_relevance_regressor, lrp_epsilon, predict_relevance, train_mlp
from textsift.budgets.params import RelevanceParams, SensitivityParams
from textsift.budgets.sensitivity import cluster_spread
from textsift.budgets.sentence_encoder import SentenceEncoder, encode
from textsift.models.fill_in import FillInModel

MLP_STAGE = "lrp_budgets.mlp"
STD_FLOOR = 1e-12  # a constant feature stays 0 after standardization


def word_spreads(encoder: SentenceEncoder, fill_in: FillInModel, texts: Sequence[str],
                 words: Sequence[tuple[int, CharSpan]], params: SensitivityParams, seed: int,
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
    spans_per_text: list[list[CharSpan]] = [[] for _ in texts]
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


@dataclass(frozen=True)
class RelevanceFit:
    """Step 3's products: the MLP, relevance on its training rows, and the publish-time regressor."""

    model: MLPClassifier
    classes: list[str]
    train_relevance: np.ndarray  # r_d = mean |R_d| over the training rows (labels known)
    regressor: Ridge

    def published_relevance(self, x: np.ndarray) -> np.ndarray:
        """r_d predicted for the rows to publish (no labels needed): the allocation's relevance."""
        return predict_relevance(self.regressor, x)


def _labels(labels: Sequence[str], classes: list[str]) -> np.ndarray:
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[label] for label in labels], dtype=np.int64)


def _mlp(x: np.ndarray, labels: Sequence[str], classes: list[str], params: RelevanceParams, seed: int,
         key: str) -> MLPClassifier:
    generator = torch.Generator().manual_seed(rng.torch_seed(seed, MLP_STAGE, key))
    return train_mlp(x, _labels(labels, classes), params.hidden, params.epochs, params.learning_rate,
                     params.batch_size, generator, n_classes=len(classes))


def fit_relevance(x_train: np.ndarray, labels: Sequence[str], params: RelevanceParams, seed: int) -> RelevanceFit:
    """Train the MLP on clean training embeddings, LRP-ε relevance per row, and the regressor (§3 step 3)."""
    classes = sorted(set(labels))
    model = _mlp(x_train, labels, classes, params, seed, "relevance")
    rows = lrp_epsilon(model, torch.as_tensor(x_train, dtype=torch.float32), epsilon=params.lrp_epsilon)
    rows_abs = rows.double().abs().numpy()
    regressor = fit_relevance_regressor(x_train, rows_abs, params.regressor_alpha)
    return RelevanceFit(model, classes, rows_abs.mean(axis=0), regressor)


def classify(x_train: np.ndarray, labels: Sequence[str], x_test: np.ndarray, params: RelevanceParams, seed: int,
             key: str) -> tuple[list[str], np.ndarray]:
    """The downstream classifier on (noisy or clean) embeddings: the step-3 MLP, trained from a keyed seed.

    Features are standardized with the training rows' mean and standard deviation first, as a data team
    would: noise scales differ by orders of magnitude between dimensions, and an unscaled dimension with
    huge noise would swamp the gradient of the ones that carry the signal.

    Returns:
        The classes and the class probabilities of ``x_test``, shape [n_test, n_classes].
    """
    classes = sorted(set(labels))
    train = np.asarray(x_train, dtype=np.float64)
    mean, std = train.mean(axis=0), train.std(axis=0) + STD_FLOOR
    model = _mlp((train - mean) / std, labels, classes, params, seed, key)
    test = (np.asarray(x_test, dtype=np.float64) - mean) / std
    with torch.inference_mode():
        proba = torch.softmax(model(torch.as_tensor(test, dtype=torch.float32)), dim=1)
    return classes, proba.numpy()
