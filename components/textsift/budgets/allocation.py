"""Per-dimension privacy budgets ε_d from relevance, and the Laplace noise they calibrate (METHODS.md §3 steps 4-5).

Accounting. Dimension d of a sentence embedding is released with Lap(0, Δf_d/ε_d) noise, which is
ε_d-DP for a change of that dimension by at most Δf_d (the sensitivity of step 2). The dimensions are
released together, so by sequential composition the whole embedding is (Σ_d ε_d)-DP, and
:func:`allocate_epsilon` rescales the budgets so that Σ_d ε_d = ε_max: ε_max bounds one *sentence
embedding*. Several embeddings of the same document compose again (k sentences: k·ε_max per document).
Two caveats the caller must keep in mind: Δf_d is an empirical spread over masked-LM candidates, so the
guarantee covers that word-substitution neighbourhood only; and the ε_d themselves are computed from
relevance, i.e. from data — if that data is the private corpus, the allocation is not itself private.

Allocation (step 4). Lap(0, λ) stays within ±w with probability p when 1 − exp(−w/λ) = p; with λ = Δf/ε,
ε_d = Δf_d · ln(1/(1−p)) / w_c,d, where w_c,d = Δf_d · (a / r̂_d^γ + b) and r̂ is relevance normalized to
mean 1. Note that Δf_d cancels: ε_d = ln(1/(1−p)) / (a / r̂_d^γ + b), and after the rescaling to ε_max the
factor ln(1/(1−p)) cancels too, so the final ε_d depend on r̂, a, b and γ only. The probability p then
holds for the *unscaled* budgets (:func:`unscaled_epsilon`); after rescaling by s = ε_max / Σ_d ε_d the
noise stays within ±w_c,d with probability 1 − (1−p)^s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from textsift import rng
from textsift.errors import ConfigError
from textsift.releases import draw_name

NOISE_STAGE = "lrp_budgets.noise"
# r̂ below 1e-3 counts as 1e-3. A dimension the classifier never uses (MiniLM has constant ones) would otherwise
# get an ε_d near 0 and noise of scale 1e18 and more: useless for privacy, ruinous for float32 consumers.
RELEVANCE_FLOOR = 1e-3


def _check_epsilon_max(epsilon_max: float) -> None:
    if not (np.isfinite(epsilon_max) and epsilon_max > 0):
        raise ConfigError(f"epsilon_max must be a positive finite number, got {epsilon_max}")


def _check_p(p: float) -> None:
    if not (np.isfinite(p) and 0 < p < 1):
        raise ConfigError(f"p must lie strictly between 0 and 1, got {p}")


def _check_width_params(a: float, b: float, gamma: float) -> None:
    for name, value in (("a", a), ("b", b), ("gamma", gamma)):
        if not (np.isfinite(value) and value >= 0):
            raise ConfigError(f"{name} must be a finite number >= 0, got {value}")
    if a + b <= 0:
        raise ConfigError(f"a + b must be > 0 (a={a}, b={b}): the noise half-width would be 0")


def check_budget_params(epsilon_max: float, p: float, a: float, b: float, gamma: float) -> None:
    """Validate the scalar parameters of the allocation (METHODS.md §3 step 4).

    Raises:
        ConfigError: naming the first invalid parameter: ε_max > 0, 0 < p < 1, a >= 0, b >= 0, a + b > 0,
            gamma >= 0 (all finite).
    """
    _check_epsilon_max(epsilon_max)
    _check_p(p)
    _check_width_params(a, b, gamma)


def _check_sensitivity(sensitivity: np.ndarray) -> np.ndarray:
    values = np.asarray(sensitivity, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ConfigError(f"sensitivity must be a non-empty 1-D array, got shape {values.shape}")
    if not (np.isfinite(values).all() and (values > 0).all()):
        raise ConfigError("sensitivity must be finite and > 0 in every dimension")
    return values


def normalized_relevance(relevance: np.ndarray) -> np.ndarray:
    """r̂ = r / mean(r), floored at ``RELEVANCE_FLOOR`` (1e-3) so that 1/r̂^γ stays bounded (METHODS.md §3 step 4).

    Raises:
        ConfigError: relevance is empty, not 1-D, negative, non-finite, or all zero.
    """
    values = np.asarray(relevance, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ConfigError(f"relevance must be a non-empty 1-D array, got shape {values.shape}")
    if not (np.isfinite(values).all() and (values >= 0).all() and values.mean() > 0):
        raise ConfigError("relevance must be finite, >= 0, and not all zero")
    return np.maximum(values / values.mean(), RELEVANCE_FLOOR)


def noise_half_width(sensitivity: np.ndarray, relevance: np.ndarray, a: float, b: float,
                     gamma: float) -> np.ndarray:
    """Half-width w_c,d = Δf_d · (a / r̂_d^γ + b) of the interval the noise should stay in (§3 step 4).

    More relevant dimensions (larger r̂_d) get a narrower interval when a > 0 and γ > 0, hence less noise.

    Args:
        sensitivity: Δf_d, shape [dim], > 0.
        relevance: r_d, shape [dim], >= 0 (normalized here to mean 1).
        a: Weight of the relevance-dependent term, >= 0.
        b: Relevance-independent term, >= 0 (a + b > 0).
        gamma: Exponent of r̂_d, >= 0 (0 makes the width independent of relevance).

    Returns:
        w_c,d in the units of the embedding, shape [dim], float64.
    """
    _check_width_params(a, b, gamma)
    delta = _check_sensitivity(sensitivity)
    r_hat = normalized_relevance(relevance)
    if r_hat.shape != delta.shape:
        raise ConfigError(f"sensitivity and relevance shapes differ: {delta.shape} vs {r_hat.shape}")
    if a == 0:  # avoids 0 / 0 where r̂^γ underflows
        return delta * b
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        return delta * (a / r_hat**gamma + b)


def unscaled_epsilon(sensitivity: np.ndarray, half_width: np.ndarray, p: float) -> np.ndarray:
    """ε_d = Δf_d · ln(1/(1−p)) / w_c,d, so that P(|Lap(0, Δf_d/ε_d)| <= w_c,d) = p (METHODS.md §3 step 4).

    Returns:
        ε_d before the rescaling to ε_max, shape [dim], float64 (0 where w_c,d is infinite).
    """
    _check_p(p)
    delta = _check_sensitivity(sensitivity)
    width = np.asarray(half_width, dtype=np.float64)
    if width.shape != delta.shape or not (width > 0).all():
        raise ConfigError(f"half_width must be > 0 with the shape of sensitivity {delta.shape}")
    return delta * np.log(1.0 / (1.0 - p)) / width


def allocate_epsilon(sensitivity: np.ndarray, relevance: np.ndarray, epsilon_max: float, p: float, a: float,
                     b: float, gamma: float) -> np.ndarray:
    """Relevance-weighted per-dimension budgets ε_d with Σ_d ε_d = ε_max (METHODS.md §3 step 4).

    Each dimension is ε_d-DP for sensitivity Δf_d; sequential composition over the dimensions makes the
    embedding ε_max-DP (see the module docstring for the accounting and for what p means after rescaling).
    With γ = 0 or a = 0 every dimension gets the same ε_d, i.e. :func:`uniform_epsilon`.

    Args:
        sensitivity: Δf_d, shape [dim], > 0 (from the sensitivity step). Not mutated.
        relevance: r_d, shape [dim], >= 0 (from LRP or the relevance regressor). Not mutated.
        epsilon_max: Total budget of one sentence embedding, > 0.
        p: Target probability that the noise stays within ±w_c,d, in (0, 1).
        a, b, gamma: Shape of w_c,d, see :func:`noise_half_width`.

    Returns:
        ε_d, shape [dim], float64, > 0, summing to ε_max.

    Raises:
        ConfigError: naming the invalid parameter, mismatched shapes, Δf_d <= 0, or a γ so large that
            some ε_d underflows to 0.
    """
    check_budget_params(epsilon_max, p, a, b, gamma)
    width = noise_half_width(sensitivity, relevance, a, b, gamma)
    raw = unscaled_epsilon(sensitivity, width, p)
    if not (np.isfinite(raw).all() and (raw > 0).all()):
        raise ConfigError(f"gamma={gamma} makes some epsilon_d underflow to 0; lower gamma or a")
    return raw * (float(epsilon_max) / raw.sum())


def uniform_epsilon(dim: int, epsilon_max: float) -> np.ndarray:
    """The baseline: ε_max / dim for every dimension (METHODS.md §3 step 4, sequential composition)."""
    if dim < 1:
        raise ConfigError(f"dim must be >= 1, got {dim}")
    _check_epsilon_max(epsilon_max)
    return np.full(int(dim), float(epsilon_max) / int(dim), dtype=np.float64)


def laplace_scale(sensitivity: np.ndarray, epsilon_d: np.ndarray) -> np.ndarray:
    """Laplace scale λ_d = Δf_d / ε_d per dimension (METHODS.md §3 step 5)."""
    delta = _check_sensitivity(sensitivity)
    eps = np.asarray(epsilon_d, dtype=np.float64)
    if eps.shape != delta.shape:
        raise ConfigError(f"epsilon_d shape {eps.shape} differs from sensitivity shape {delta.shape}")
    if not (np.isfinite(eps).all() and (eps > 0).all()):
        raise ConfigError("epsilon_d must be finite and > 0 in every dimension")
    return delta / eps


def unit_laplace(doc_ids: Sequence[str], dim: int, key: rng.Key) -> np.ndarray:
    """Lap(0, 1) draws, one row of ``dim`` per id from ``rng.generator(key, "lrp_budgets.noise", id)``; ``key`` is
    a setting's release key when the noise is released (:mod:`textsift.releases`).

    :func:`laplace_noise` scales these by λ_d; a caller comparing several allocations on the same rows
    (the grid search) draws them once and scales them per allocation, which gives the same noise.
    """
    unit = np.empty((len(doc_ids), int(dim)), dtype=np.float64)
    for row, doc_id in enumerate(doc_ids):
        unit[row] = rng.generator(key, NOISE_STAGE, str(doc_id)).laplace(0.0, 1.0, size=int(dim))
    return unit


def noise_names(doc_ids: Sequence[str], clean: np.ndarray) -> list[str]:
    """Per row, the name its noise is drawn by: its id and a digest of its clean float32 embedding
    (:func:`textsift.releases.draw_name`). Another text under the same id (another file's ``row-1``, an edited
    document) draws afresh, so the difference of two published rows never cancels their noise; the same text under
    the same id and setting gets the same noise, which publishes nothing new."""
    rows = np.ascontiguousarray(clean, dtype=np.float32)
    return [draw_name(str(doc_id), row.tobytes()) for doc_id, row in zip(doc_ids, rows, strict=True)]


def laplace_noise(embeddings: np.ndarray, doc_ids: Sequence[str], sensitivity: np.ndarray,
                  epsilon_d: np.ndarray, key: rng.Key) -> np.ndarray:
    """Add Lap(0, Δf_d/ε_d) to every dimension of every embedding (METHODS.md §3 step 5).

    Row i's noise comes from ``rng.generator(key, "lrp_budgets.noise", noise_names(doc_ids, embeddings)[i])``, so it
    depends only on (key, id, clean row) — never on batch split, row order or worker count; with the secret key
    nobody else can regenerate it (an outsider who could would subtract it). Ids must be unique per released set.

    Args:
        embeddings: Clean sentence embeddings, shape [n, dim]. Not mutated.
        doc_ids: One unique id (str) per row.
        sensitivity: Δf_d, shape [dim], > 0.
        epsilon_d: Per-dimension budgets, shape [dim], > 0 (each row is then Σ_d ε_d-DP).
        key: The setting's release key (:func:`textsift.releases.release_key`; a public seed only in tests).

    Returns:
        A new array of noisy embeddings, same shape; same dtype for floating input, else float64.

    Raises:
        ConfigError: bad sensitivity or ε_d. ValueError: shapes or ids do not match the rows, or ids repeat.
    """
    clean = np.asarray(embeddings)
    scale = laplace_scale(sensitivity, epsilon_d)
    if clean.ndim != 2 or clean.shape[1] != scale.shape[0]:
        raise ValueError(f"embeddings must be [n, {scale.shape[0]}], got shape {clean.shape}")
    ids = list(doc_ids)
    if len(ids) != clean.shape[0]:
        raise ValueError(f"got {len(ids)} doc ids for {clean.shape[0]} embeddings")
    if len(set(ids)) != len(ids):
        raise ValueError("doc ids must be unique: rows with the same id would get the same noise")
    unit = unit_laplace(noise_names(ids, clean), scale.shape[0], key)
    out_dtype = clean.dtype if np.issubdtype(clean.dtype, np.floating) else np.float64
    return (clean.astype(np.float64) + unit * scale).astype(out_dtype)
