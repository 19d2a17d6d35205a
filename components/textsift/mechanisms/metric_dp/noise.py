"""Metric-DP noise in the projected space (METHODS.md §2, Feyisetan et al. 2020).

N = r · u with u uniform on the unit sphere of R^m (a normalized standard Gaussian) and
r ~ Gamma(shape=m, scale=Δ/ε), Δ = 1 + β (the projection may stretch distances by 1 + β).
The density of N is ∝ exp(−ε ||N|| / Δ), so releasing the word nearest to μ + N is
ε-metric-DP for ONE token occurrence: words at projected distance D are
exp(ε·D/Δ)-indistinguishable. A document of n tokens composes to nε.
"""

from __future__ import annotations

import numpy as np

from textsift.errors import ConfigError


def check_privacy_params(epsilon: float, beta: float) -> None:
    """Raise ConfigError unless ε > 0 (per token) and 0 < β < 1."""
    if not epsilon > 0:
        raise ConfigError(f"metric-DP epsilon must be > 0 (got {epsilon})")
    if not 0 < beta < 1:
        raise ConfigError(f"metric-DP beta must be in (0, 1) (got {beta})")


def sample_noise(generator: np.random.Generator, n: int, m: int, epsilon: float, beta: float) -> np.ndarray:
    """n noise vectors in R^m from one generator, in one vectorized call.

    Args:
        generator: a textsift.rng generator (one per document in the privatizer).
        n: number of token occurrences.
        m: dimension of the (projected) space.
        epsilon: privacy parameter per token occurrence, > 0.
        beta: projection distortion in (0, 1); sensitivity is 1 + β.

    Returns:
        (n, m) float32 array (the precision of the index): directions uniform on the sphere,
        norms Gamma(m, (1 + β)/ε).
    """
    check_privacy_params(epsilon, beta)
    direction = generator.standard_normal((n, m), dtype=np.float32)
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    magnitude = generator.gamma(shape=m, scale=(1.0 + beta) / epsilon, size=n)
    return direction * magnitude[:, None].astype(np.float32)
