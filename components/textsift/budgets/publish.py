"""One published embedding set: choose a, b, γ, allocate ε_d, add the noise, describe it (METHODS.md §3 steps 4-6).

The grid search scores every (a, b, γ) of the grid by the downstream classifier's validation AUC
(macro-F1 for more than two classes): train on noisy training embeddings, test on noisy validation
embeddings — what a data team holding only the published set would see. The Laplace draws of a row are
keyed by (seed, document id), drawn once per row and scaled per allocation, so every grid point — and
the published set — sees the same noise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.accounting import ACCOUNTING
from textsift.budgets.allocation import allocate_epsilon, laplace_scale, uniform_epsilon
from textsift.budgets.fit import classify
from textsift.budgets.params import EmbeddingDPSetting, GridParams, RelevanceParams
from textsift.evaluation.utility import score_probabilities


@dataclass(frozen=True)
class Split:
    """Rows of one split: embeddings [n, dim], their document ids and labels, and their unit noise.

    ``unit`` holds the rows' Lap(0, 1) draws (:func:`textsift.budgets.allocation.unit_laplace`, keyed by
    (seed, id)); an allocation only scales them.
    """

    x: np.ndarray
    ids: list[str]
    labels: list[str]
    unit: np.ndarray


def selection_metric(labels: Sequence[str]) -> str:
    """ROC AUC for a binary task, macro-F1 otherwise (AUC is defined for two classes only here)."""
    return "roc_auc" if len(set(labels)) == 2 else "macro_f1"


def epsilon_for(setting: EmbeddingDPSetting, sensitivity: np.ndarray, relevance: np.ndarray,
                shape: tuple[float, float, float] | None) -> np.ndarray:
    """ε_d of a setting: relevance-weighted for ``lrp`` with ``shape = (a, b, γ)``, else uniform (§3 step 4)."""
    if setting.allocation == "uniform" or shape is None:
        return uniform_epsilon(sensitivity.shape[0], setting.epsilon_max)
    a, b, gamma = shape
    return allocate_epsilon(sensitivity, relevance, setting.epsilon_max, setting.p, a, b, gamma)


def noisy(split: Split, sensitivity: np.ndarray, epsilon_d: np.ndarray) -> np.ndarray:
    """The split's embeddings plus its unit Laplace noise scaled by λ_d = Δf_d / ε_d (§3 step 5)."""
    return (split.x.astype(np.float64) + split.unit * laplace_scale(sensitivity, epsilon_d)).astype(np.float32)


def _grid_points(setting: EmbeddingDPSetting, grid: GridParams) -> list[tuple[float, float, float]]:
    if setting.a is not None and setting.b is not None and setting.gamma is not None:
        return [(setting.a, setting.b, setting.gamma)]
    return [(a, b, g) for a, b, g in itertools.product(grid.a, grid.b, grid.gamma) if a + b > 0]


def choose_shape(setting: EmbeddingDPSetting, sensitivity: np.ndarray, relevance: np.ndarray, grid: GridParams,
                 train: Split, validation: Split, classifier: RelevanceParams, seed: int
                 ) -> tuple[tuple[float, float, float] | None, pd.DataFrame]:
    """Pick (a, b, γ) by validation score of the downstream classifier on noisy embeddings (§3 step 4).

    Returns:
        The winning shape (None for ``uniform``) and one row per grid point: ``a, b, gamma, metric, score``
        (a uniform setting gets one row with a, b, γ empty). Ties go to the earlier grid point.
    """
    metric = selection_metric(train.labels)
    points: list[tuple[float, float, float] | None] = (
        [None] if setting.allocation == "uniform" else list(_grid_points(setting, grid)))
    rows: list[dict[str, Any]] = []
    for shape in points:
        epsilon_d = epsilon_for(setting, sensitivity, relevance, shape)
        classes, proba = classify(noisy(train, sensitivity, epsilon_d), train.labels,
                                  noisy(validation, sensitivity, epsilon_d), classifier, seed, "grid")
        value = score_probabilities(classes, proba, validation.labels)[metric]
        a, b, gamma = shape if shape is not None else (math.nan, math.nan, math.nan)
        rows.append({"a": a, "b": b, "gamma": gamma, "metric": metric, "score": value})
    table = pd.DataFrame(rows)
    scores = table["score"].fillna(-math.inf).to_numpy()
    best = points[int(np.argmax(scores))]
    return best, table


def manifest(name: str, setting: EmbeddingDPSetting, shape: tuple[float, float, float] | None,
             sensitivity: np.ndarray, epsilon_d: np.ndarray, encoder: str, n_rows: int,
             key_fingerprint: str) -> dict[str, Any]:
    """What a data team needs to use and audit the published set (§3 step 6); numbers only, no text, no seed:
    the noise is keyed by the project's secret key, named here by its fingerprint only."""
    a, b, gamma = shape if shape is not None else (None, None, None)
    return {
        "setting": name, "allocation": setting.allocation, "epsilon_max": setting.epsilon_max, "p": setting.p,
        "a": a, "b": b, "gamma": gamma, "encoder": encoder, "dim": int(sensitivity.shape[0]), "rows": n_rows,
        "epsilon_d": [float(v) for v in epsilon_d], "sensitivity": [float(v) for v in sensitivity],
        "laplace_scale": [float(v) for v in laplace_scale(sensitivity, epsilon_d)],
        "key_fingerprint": key_fingerprint,
        "noise_key": "rng.generator(the setting's release key, 'lrp_budgets.noise', doc_id + clean-row digest)",
        "accounting": ACCOUNTING,
    }
