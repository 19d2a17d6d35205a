"""Per-dimension sensitivity Δf_d of sentence embeddings from masked-LM candidates (METHODS.md §3 step 2).

The caller masks one sensitive word, lets the masked LM propose its top-k fillers, embeds the resulting
sentences S_p and hands the embeddings here. This module only does the arithmetic: k-medoids clustering
of one word's candidate embeddings, the per-dimension spread (max − min) inside each cluster, and the
aggregation of the per-word spreads over the corpus.

Δf_d is an *empirical* sensitivity: it bounds how much dimension d moved when one sensitive word was
swapped for one of its observed candidates. A Laplace mechanism calibrated to it is ε-DP with respect to
that candidate-substitution neighbourhood, not with respect to arbitrary changes of the sentence.
"""

from __future__ import annotations

from typing import Literal

import kmedoids
import numpy as np
from scipy.spatial.distance import cdist

from textsift.errors import ConfigError

Aggregation = Literal["max", "mean", "p95"]
AGGREGATIONS: tuple[str, ...] = ("max", "mean", "p95")


def _check_matrix(values: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def cluster_labels(candidates: np.ndarray, n_clusters: int, seed: int) -> np.ndarray:
    """K-medoids labels of one sensitive word's candidate embeddings (METHODS.md §3 step 2).

    Runs ``kmedoids.fasterpam`` on the euclidean distance matrix, single-threaded so that the result is a
    pure function of (candidates, n_clusters, seed).

    Args:
        candidates: Embeddings of the candidate sentences S_p of one sensitive word, shape [n_cand, dim].
        n_clusters: Number of medoids requested; clipped to n_cand.
        seed: Seed of fasterpam's random initialization and processing order.

    Returns:
        Integer cluster label of each candidate, shape [n_cand].

    Raises:
        ConfigError: ``n_clusters`` is below 1.
        ValueError: ``candidates`` is not a non-empty, finite 2-D array.
    """
    if n_clusters < 1:
        raise ConfigError(f"n_clusters must be >= 1, got {n_clusters}")
    points = _check_matrix(candidates, "candidates")
    k = min(int(n_clusters), points.shape[0])
    if k == 1:
        return np.zeros(points.shape[0], dtype=np.int64)
    distances = cdist(points, points, metric="euclidean")
    result = kmedoids.fasterpam(distances, k, random_state=seed, n_cpu=1)
    return np.asarray(result.labels, dtype=np.int64)


def cluster_spread(candidates: np.ndarray, n_clusters: int, seed: int) -> np.ndarray:
    """Per-dimension spread of one sensitive word's candidates, inside its k-medoids clusters (§3 step 2).

    For each cluster c the spread of dimension d is max − min of d over the cluster's members; the word's
    spread is the maximum over its clusters. Clustering keeps far-apart senses of a word (clusters) from
    inflating the spread, so the result is never larger than the global spread of the candidates.

    Args:
        candidates: Candidate sentence embeddings of ONE sensitive word, shape [n_cand, dim]. Not mutated.
        n_clusters: Number of k-medoids clusters; clipped to n_cand.
        seed: Seed of the k-medoids initialization.

    Returns:
        Spread per dimension, shape [dim], float64, >= 0 (zeros for a single candidate).

    Raises:
        ConfigError: ``n_clusters`` is below 1.
        ValueError: ``candidates`` is not a non-empty, finite 2-D array.
    """
    points = _check_matrix(candidates, "candidates")
    labels = cluster_labels(points, n_clusters, seed)
    spread = np.zeros(points.shape[1], dtype=np.float64)
    for label in np.unique(labels):
        members = points[labels == label]
        spread = np.maximum(spread, members.max(axis=0) - members.min(axis=0))
    return spread


def aggregate_sensitivity(spreads: np.ndarray, agg: Aggregation = "max",
                          min_sensitivity: float = 1e-6) -> np.ndarray:
    """Corpus-level sensitivity Δf_d from the per-word spreads (METHODS.md §3 step 2, ``sensitivity_agg``).

    ``max`` is the conservative default: Δf_d covers every observed word substitution. ``mean`` and ``p95``
    give smaller Δf_d (less noise) but under-cover the words whose spread exceeds them, so the Laplace
    mechanism is then not calibrated for those words.

    Args:
        spreads: One row per sensitive word (from :func:`cluster_spread`), shape [n_words, dim]. Not mutated.
        agg: ``"max"``, ``"mean"`` or ``"p95"`` (95th percentile, linear interpolation) over words.
        min_sensitivity: Floor applied to every dimension, so that Δf_d > 0 always (a zero Δf_d would make
            the Laplace scale zero and the allocation undefined).

    Returns:
        Δf_d per dimension, shape [dim], float64, >= ``min_sensitivity``.

    Raises:
        ConfigError: ``agg`` is unknown or ``min_sensitivity`` is not a positive finite number.
        ValueError: ``spreads`` is empty, not 2-D, non-finite or negative.
    """
    if agg not in AGGREGATIONS:
        raise ConfigError(f"sensitivity_agg must be one of {AGGREGATIONS}, got {agg!r}")
    if not (np.isfinite(min_sensitivity) and min_sensitivity > 0):
        raise ConfigError(f"min_sensitivity must be a positive finite number, got {min_sensitivity}")
    values = _check_matrix(spreads, "spreads")
    if (values < 0).any():
        raise ValueError("spreads must be >= 0")
    if agg == "max":
        combined = values.max(axis=0)
    elif agg == "mean":
        combined = values.mean(axis=0)
    else:
        combined = np.percentile(values, 95, axis=0)
    return np.maximum(combined, float(min_sensitivity))
