"""Random projection of embeddings before metric-DP noise (METHODS.md §2).

Feyisetan & Kasiviswanathan (2021): projecting d-dimensional embeddings to
m = floor((ω + sqrt(ln(1/δ)))² / β²) dimensions with a Gaussian matrix keeps Euclidean
distances within a factor (1 ± β) with probability 1 − δ, so noise calibrated with
sensitivity 1 + β in R^m gives ε-metric-DP per token occurrence. The notebook uses ω = ln d
(omega ``log``, the larger and safer m: 183 / 181 / 219 for d = 320 / 300 / 768 at β = 0.7);
the paper writes ω = sqrt(ln d) (omega ``sqrt_log``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from textsift.errors import ConfigError

Omega = Literal["log", "sqrt_log"]


def projected_dim(d: int, beta: float, delta: float = 1e-6, omega: Omega = "log") -> int:
    """The projected dimension m of METHODS.md §2 for embedding dimension ``d``.

    Args:
        d: dimension of the original embeddings (≥ 2).
        beta: projection distortion in (0, 1); smaller β gives a larger m.
        delta: failure probability of the distance guarantee, in (0, 1).
        omega: ``log`` (ω = ln d, the notebook) or ``sqrt_log`` (ω = sqrt(ln d), the paper).

    Returns:
        m as an integer (may exceed d; callers then skip the projection).
    """
    if d < 2:
        raise ConfigError(f"embedding dimension must be >= 2 (got {d})")
    check_beta(beta)
    if not 0 < delta < 1:
        raise ConfigError(f"delta must be in (0, 1) (got {delta})")
    width = math.log(d) if omega == "log" else math.sqrt(math.log(d))
    return int(math.floor((width + math.sqrt(math.log(1 / delta))) ** 2 / beta**2))


def check_beta(beta: float) -> None:
    """Raise ConfigError unless 0 < β < 1 (the projection's distortion, METHODS.md §2)."""
    if not 0 < beta < 1:
        raise ConfigError(f"beta must be in (0, 1) (got {beta})")


def gaussian_projection(d: int, m: int, generator: np.random.Generator) -> np.ndarray:
    """A d × m matrix with i.i.d. N(0, 1/m) entries (as scikit-learn's GaussianRandomProjection).

    One matrix per index, drawn once from a seeded generator and stored with the index, so
    vocabulary vectors and every later query vector go through the same map.
    """
    return (generator.standard_normal((d, m)) / math.sqrt(m)).astype(np.float32)


def project(vectors: np.ndarray, projection: np.ndarray | None) -> np.ndarray:
    """Rows of ``vectors`` mapped to R^m (unchanged, as float32, when ``projection`` is None)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if projection is None:
        return vectors
    return vectors @ projection


@dataclass(frozen=True)
class ProjectedVocabulary:
    """Index items in the projected space.

    Attributes:
        words: item labels (distinct words, or the tokens of contextual pairs).
        vectors: (n, dim) float32 projected vectors (the original ones when not projected).
        projection: the d × m matrix, or None when m ≥ d made projecting pointless.
        d: original dimension; m: the formula's dimension (may exceed d).
    """

    words: list[str]
    vectors: np.ndarray
    projection: np.ndarray | None
    d: int
    m: int

    @property
    def projected(self) -> bool:
        """Whether the vectors went through a projection (False when m ≥ d made it pointless)."""
        return self.projection is not None

    @property
    def dim(self) -> int:
        """The dimension of the stored vectors: m when projected, else d."""
        return int(self.vectors.shape[1])

    def subset(self, keep: np.ndarray) -> ProjectedVocabulary:
        """The items where the boolean mask ``keep`` is true, in order, under the same projection."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self.words),):
            raise ValueError(f"subset mask has shape {keep.shape}, expected ({len(self.words)},)")
        words = [w for w, k in zip(self.words, keep.tolist(), strict=True) if k]
        return ProjectedVocabulary(words, self.vectors[keep], self.projection, self.d, self.m)


def project_vocabulary(
    words: list[str], vectors: np.ndarray, *, beta: float, delta: float, omega: Omega,
    generator: np.random.Generator,
) -> ProjectedVocabulary:
    """Project the items with one seeded Gaussian matrix, or keep them when m ≥ d (e.g. GloVe-50d)."""
    d = int(vectors.shape[1])
    m = projected_dim(d, beta, delta, omega)
    projection = gaussian_projection(d, m, generator) if m < d else None
    return ProjectedVocabulary(list(words), project(vectors, projection), projection, d, m)
