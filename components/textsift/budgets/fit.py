"""The relevance r_d of the corpus-level fit (METHODS.md §3 step 3) and the downstream classifier on embeddings.

:func:`fit_relevance` trains the MLP on clean (step-1) training embeddings, takes LRP-ε relevance and fits the
relevance regressor that stands in for labels at publish time; :func:`classify` is the same MLP used as the
downstream classifier. Step 2 (Δf_d from the fill-in model's candidates) is :mod:`textsift.budgets.spreads`: the
stages that publish or judge noisy embeddings import this module without loading the fill-in model's code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.linear_model import Ridge

from textsift import rng
from textsift.budgets.lrp import MLPClassifier, fit_relevance_regressor, lrp_epsilon, predict_relevance, train_mlp
from textsift.budgets.params import RelevanceParams

MLP_STAGE = "lrp_budgets.mlp"
STD_FLOOR = 1e-12  # a constant feature stays 0 after standardization


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
