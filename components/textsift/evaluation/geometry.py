"""Geometry of a projected embedding space and plausible deniability (METHODS.md §2).

The notebook's experiments, per embedding source, on a seeded sample of index items:
- mean ||μ − (μ+N)|| per ε: how far the noise moves a word (E = m(1 + β)/ε);
- mean distance from a word to its k nearest neighbours, per k: the scale the noise is
  compared with (k is capped at the number of items − 1);
- plausible deniability (Feyisetan et al. 2020): over M noisy draws of the mechanism for word
  w, N_w = share of draws that return w itself and S_w = number of distinct outputs.
ε here is the per-token-occurrence ε of the mechanism. Pure: arrays in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from textsift import rng
from textsift.indexes.exact_index import ExactSearcher
from textsift.indexes.params import GeometryParams
from textsift.indexes.store import Searcher
from textsift.mechanisms.metric_dp.noise import sample_noise

RNG_STAGE = "build_indexes.geometry"
QUERIES_PER_CALL = 4096  # small blocks stay in cache: faster than large ones here


def metric_suffix(value: float) -> str:
    """A value as it appears in a metric name (``5``, ``0.5``; MLflow allows no ``+``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value)).replace("+", "")


@dataclass(frozen=True)
class Deniability:
    """One ε: the mean noise distance, and N_w, S_w for every sampled item."""

    epsilon: float
    noise_distance: float
    n_w: np.ndarray
    s_w: np.ndarray


@dataclass(frozen=True)
class GeometryReport:
    """All experiments of one index."""

    knn: dict[int, float]
    deniability: list[Deniability]
    sample_size: int
    draws: int

    def metrics(self) -> dict[str, float]:
        """Aggregates for metrics JSON and MLflow (no words)."""
        out = {"geometry.sample_size": float(self.sample_size), "deniability.draws": float(self.draws)}
        out.update({f"geometry.knn_distance.k_{k}": v for k, v in self.knn.items()})
        for d in self.deniability:
            eps = metric_suffix(d.epsilon)
            out[f"geometry.noise_distance.eps_{eps}"] = d.noise_distance
            for name, values in (("N_w", d.n_w), ("S_w", d.s_w)):
                out[f"deniability.{name}.mean.eps_{eps}"] = float(np.mean(values))
                out[f"deniability.{name}.median.eps_{eps}"] = float(np.median(values))
        return out


def sample_items(n_items: int, size: int, generator: np.random.Generator) -> np.ndarray:
    """Sorted positions of min(size, n_items) distinct items."""
    return np.sort(generator.choice(n_items, size=min(size, n_items), replace=False))


def knn_distances(
    vectors: np.ndarray, sample: np.ndarray, k_list: Sequence[int], device: str = "cpu"
) -> dict[int, float]:
    """Mean distance from each sampled item to its k nearest other items, averaged over the sample.

    Exact (not Annoy) so the reference scale has no ANN error; k is capped at n − 1.
    """
    ks = sorted({min(k, len(vectors) - 1) for k in k_list if k >= 1} - {0})
    if not ks:
        return {}
    distances = ExactSearcher(vectors, device).k_nearest_distances(vectors[sample], ks[-1] + 1)[:, 1:]
    return {k: float(distances[:, :k].mean()) for k in ks}


def _distinct_per_row(values: np.ndarray) -> np.ndarray:
    ordered = np.sort(values, axis=1)
    return 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)


def deniability(
    vectors: np.ndarray, label_ids: np.ndarray, sample: np.ndarray, epsilon: float, beta: float, draws: int,
    searcher: Searcher, generator: np.random.Generator,
) -> Deniability:
    """N_w, S_w and the mean noise distance of M = ``draws`` mechanism runs per sampled item.

    Args:
        vectors: (n, m) projected items; label_ids: (n,) integer label of each item (equal
            labels = same output word, as for repeated tokens of a contextual index).
        sample: positions of the sampled items.
        epsilon, beta: the mechanism's per-token ε and projection β.
        draws: M.
        searcher: the index's searcher (as used when privatizing).
        generator: noise source for this ε.
    """
    per_call = max(1, QUERIES_PER_CALL // draws)
    n_w, s_w, norms = [], [], []
    for start in range(0, len(sample), per_call):
        items = sample[start:start + per_call]
        noise = sample_noise(generator, len(items) * draws, vectors.shape[1], epsilon, beta)
        queries = np.repeat(vectors[items], draws, axis=0) + noise
        outputs = label_ids[searcher.nearest(queries)].reshape(len(items), draws)
        n_w.append((outputs == label_ids[items][:, None]).mean(axis=1))
        s_w.append(_distinct_per_row(outputs))
        norms.append(np.linalg.norm(noise, axis=1))
    return Deniability(epsilon, float(np.concatenate(norms).mean()), np.concatenate(n_w), np.concatenate(s_w))


def geometry_report(
    vectors: np.ndarray, labels: Sequence[str], searcher: Searcher, params: GeometryParams, beta: float,
    seed: int, key: str, device: str = "cpu",
) -> GeometryReport:
    """Every experiment of METHODS.md §2 for one index; draws keyed by (seed, ``key``, ε)."""
    sample = sample_items(len(vectors), params.vocab_sample, rng.generator(seed, RNG_STAGE, f"{key}/sample"))
    _, label_ids = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    runs = [
        deniability(vectors, label_ids, sample, eps, beta, params.draws, searcher,
                    rng.generator(seed, RNG_STAGE, f"{key}/epsilon={eps!r}"))
        for eps in params.epsilons
    ]
    return GeometryReport(knn_distances(vectors, sample, params.k_list, device), runs, len(sample), params.draws)
