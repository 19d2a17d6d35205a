"""What an outsider computes from two published embedding sets of the same documents (METHODS.md §3).

Each ``embedding_dp`` setting publishes Y_i = X + s_i ⊙ N_i for the same rows (same doc ids), and its manifest
publishes the per-dimension Laplace scales s_i = Δf_d / ε_d. An outsider holding two sets, their manifests and
nothing else (not the secret key, not X) has two estimates of the clean embeddings X:

- the **exact solve** (s_2 Y_1 − s_1 Y_2) / (s_2 − s_1), per dimension where the scales differ: X itself when
  both sets scale the SAME unit draw (N_1 = N_2: two equations, two unknowns), an amplified mix of the two draws
  when they are independent;
- the **inverse-variance average** (Y_1 / s_1² + Y_2 / s_2²) / (1 / s_1² + 1 / s_2²): the best linear estimate
  independent draws allow, i.e. what the composition of the two releases (ε_1 + ε_2 per row) already accounts for.

The attacker's best is the estimate nearer to X (the evaluator picks it with X in hand: an upper bound on an
outsider who must pick without it, and the strongest attacker is the one reported). The **composition baseline**
is the cosine the inverse-variance average reaches in expectation when the draws ARE independent, simulated with
fresh draws of the published scales. The **gain** is how much of the remaining distance to X the attacker closes
beyond what composition allows, i.e. beyond both the average on these very draws and the baseline: 1 when the two
sets solve exactly for X, exactly 0 when the noise is independent (the exact solve then only amplifies noise and
the average is the best estimate). Measuring it against the realized average too keeps sampling noise out: on 120
rows whose baseline is 0.954, the realized average of independent draws reached 0.957, which against the baseline
alone would have read as a 6% gain.

Pure numpy: arrays in, numbers out; the caller aligns the rows by doc id and draws the simulation's generator
from the public seed (the outsider does not know the key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

SCALE_RTOL = 1e-6  # scales closer than this (relative) are "equal": no exact solve there, the average instead
BASELINE_DRAWS = 4  # simulated pairs of draws behind the composition baseline (its spread falls as 1/sqrt(draws))


def _arrays(y1: np.ndarray, y2: np.ndarray, s1: np.ndarray, s2: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.asarray(y1, np.float64), np.asarray(y2, np.float64)
    u, v = np.asarray(s1, np.float64), np.asarray(s2, np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"two published sets of the same rows are needed, got shapes {a.shape} and {b.shape}")
    if u.shape != (a.shape[1],) or v.shape != (a.shape[1],):
        raise ValueError(f"one scale per dimension is needed ({a.shape[1]}), got {u.shape} and {v.shape}")
    if not (np.isfinite(u).all() and np.isfinite(v).all() and (u > 0).all() and (v > 0).all()):
        raise ValueError("Laplace scales must be finite and > 0")
    return a, b, u, v


def inverse_variance_average(y1: np.ndarray, y2: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """(Y_1 / s_1² + Y_2 / s_2²) / (1 / s_1² + 1 / s_2²) per dimension: the best linear estimate of X from two
    releases with independent noise (Laplace variance 2 s², the constant cancels); float64 [n, dim]."""
    a, b, u, v = _arrays(y1, y2, s1, s2)
    w1, w2 = 1.0 / u**2, 1.0 / v**2
    return (a * w1 + b * w2) / (w1 + w2)


def shared_noise_solve(y1: np.ndarray, y2: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """X solved exactly from Y_i = X + s_i ⊙ L (the SAME unit draw L in both): (s_2 Y_1 − s_1 Y_2) / (s_2 − s_1)
    in every dimension whose scales differ; where they are equal (``SCALE_RTOL``) the system has no unique
    solution and the inverse-variance average stands in. float64 [n, dim]."""
    a, b, u, v = _arrays(y1, y2, s1, s2)
    differ = np.abs(v - u) > SCALE_RTOL * np.maximum(u, v)
    out = inverse_variance_average(a, b, u, v)
    out[:, differ] = (v[differ] * a[:, differ] - u[differ] * b[:, differ]) / (v[differ] - u[differ])
    return out


def mean_cosine(estimate: np.ndarray, clean: np.ndarray) -> float:
    """Mean over rows of the cosine between ``estimate`` and ``clean`` (a zero row counts 0)."""
    a, b = np.asarray(estimate, np.float64), np.asarray(clean, np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = (a * b).sum(axis=1)
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return float(cos.mean()) if cos.size else float("nan")


def composition_baseline(clean: np.ndarray, s1: np.ndarray, s2: np.ndarray, rng: np.random.Generator,
                         draws: int = BASELINE_DRAWS) -> float:
    """The mean cosine with ``clean`` of the inverse-variance average of two releases with INDEPENDENT Laplace
    draws of scales ``s1`` and ``s2``: what two releases give an outsider when the noise is what the accounting
    assumes (``draws`` simulated pairs of draws per row, averaged; ``rng`` from the public seed)."""
    x = np.asarray(clean, np.float64)
    u, v = np.asarray(s1, np.float64), np.asarray(s2, np.float64)
    cosines = [mean_cosine(inverse_variance_average(x + rng.laplace(0.0, 1.0, size=x.shape) * u,
                                                    x + rng.laplace(0.0, 1.0, size=x.shape) * v, u, v), x)
               for _ in range(max(int(draws), 1))]
    return float(np.mean(cosines))


@dataclass(frozen=True)
class CrossRelease:
    """The outsider's two estimates of the clean embeddings from one pair of releases, and how near each gets.

    ``solve_cosine`` / ``average_cosine``: mean row cosine of the exact solve / the inverse-variance average with
    the clean embeddings; ``best_cosine``: the larger (the attacker's best) and ``best`` its estimate;
    ``baseline``: the composition baseline; ``gain``: (best − r) / (1 − r) with r = max(average, baseline),
    clipped to [0, 1] (:func:`gain_over`).
    """

    solve_cosine: float
    average_cosine: float
    best_cosine: float
    baseline: float
    gain: float
    best: np.ndarray

    def scores(self) -> dict[str, float]:
        """The numbers only (no estimate): what :func:`per_setting` and the metrics take."""
        return {"solve_cosine": self.solve_cosine, "average_cosine": self.average_cosine,
                "best_cosine": self.best_cosine, "baseline": self.baseline, "gain": self.gain}


def cross_release(y1: np.ndarray, y2: np.ndarray, s1: np.ndarray, s2: np.ndarray, clean: np.ndarray,
                  rng: np.random.Generator) -> CrossRelease:
    """Both estimates of the clean embeddings from two releases of the same rows, scored against ``clean``.

    Args:
        y1, y2: The two published sets [n, dim], rows aligned by doc id.
        s1, s2: Their published per-dimension Laplace scales [dim] (the manifests' ``laplace_scale``).
        clean: The clean embeddings the releases were made from [n, dim] (the evaluator's, never the outsider's).
        rng: Generator of the composition baseline's simulated draws (the public seed).
    """
    solved, averaged = shared_noise_solve(y1, y2, s1, s2), inverse_variance_average(y1, y2, s1, s2)
    solve_cos, average_cos = mean_cosine(solved, clean), mean_cosine(averaged, clean)
    best_cos, best = (solve_cos, solved) if solve_cos >= average_cos else (average_cos, averaged)
    baseline = composition_baseline(clean, s1, s2, rng)
    return CrossRelease(solve_cos, average_cos, best_cos, baseline, gain_over(best_cos, max(average_cos, baseline)),
                        best)


def gain_over(cosine: float, baseline: float) -> float:
    """The share of the distance to exact recovery (cosine 1) that ``cosine`` closes beyond ``baseline`` (what
    composition allows), in [0, 1]: 0 at or below it, 1 for an exact recovery; the privacy criterion's 0-1 scale."""
    if not (np.isfinite(cosine) and np.isfinite(baseline)):
        return float("nan")
    if baseline >= 1.0:
        return 0.0
    return float(np.clip((cosine - baseline) / (1.0 - baseline), 0.0, 1.0))


def per_setting(pairs: Mapping[tuple[str, str], Mapping[str, float]]) -> dict[str, dict[str, float | str]]:
    """Each setting's worst case over the pairs it is in: the largest of each pair score, and the partner (and the
    keyword success, when the pairs carry ``attack_success``) of the pair whose estimate came nearest the clean
    embeddings.

    Args:
        pairs: ``(setting a, setting b) -> {solve_cosine, average_cosine, best_cosine, baseline, gain[,
            attack_success]}`` for every pair of published sets scored with :func:`cross_release`.

    Returns:
        ``setting -> {cross_release_cosine, cross_release_solve_cosine, cross_release_average_cosine,
        cross_release_baseline, cross_release_gain, cross_release_partner[, attack_success_solved]}``.
    """
    mine: dict[str, list[tuple[str, Mapping[str, float]]]] = {}
    for (a, b), scores in pairs.items():
        mine.setdefault(a, []).append((b, scores))
        mine.setdefault(b, []).append((a, scores))
    out: dict[str, dict[str, float | str]] = {}
    for setting, entries in sorted(mine.items()):
        partner, nearest = max(entries, key=lambda e: (_finite_or(e[1]["best_cosine"]), e[0]))
        row: dict[str, float | str] = {
            f"cross_release_{name}": max((float(s[key]) for _, s in entries), key=_finite_or)
            for name, key in (("cosine", "best_cosine"), ("solve_cosine", "solve_cosine"),
                              ("average_cosine", "average_cosine"), ("baseline", "baseline"), ("gain", "gain"))}
        row["cross_release_partner"] = partner
        if "attack_success" in nearest:
            row["attack_success_solved"] = float(nearest["attack_success"])
        out[setting] = row
    return out


def _finite_or(value: float) -> float:
    return float(value) if np.isfinite(value) else -np.inf
