"""The cross-release solver (textsift.evaluation.cross_release): two published embedding sets of the same rows.

Synthetic releases Y_i = X + s_i ⊙ N_i with per-dimension scales that differ between the two sets, as two
``embedding_dp`` settings' manifests publish them. If the two sets scale ONE unit draw, the outsider solves exactly
for X; if the draws are independent, nothing beats the inverse-variance average, whose expected cosine is the
composition baseline.
"""

from __future__ import annotations

import numpy as np
import pytest

from textsift.evaluation.cross_release import (
    composition_baseline,
    cross_release,
    gain_over,
    inverse_variance_average,
    mean_cosine,
    per_setting,
    shared_noise_solve,
)

N, DIM = 400, 64
TOLERANCE = 0.02  # cosine: the attack is one draw per row (mean over 400 rows), the baseline 4 simulated ones


@pytest.fixture
def releases() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clean rows X and two scale vectors that differ in every dimension (s2 = 1.5-4 x s1), noise about the signal."""
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 1.0, size=(N, DIM))
    s1 = rng.uniform(0.5, 2.0, size=DIM)
    return x, s1, s1 * rng.uniform(1.5, 4.0, size=DIM)


def test_two_sets_scaling_one_unit_draw_give_the_clean_embeddings_back(releases: tuple) -> None:
    x, s1, s2 = releases
    unit = np.random.default_rng(1).laplace(0.0, 1.0, size=x.shape)
    y1, y2 = (x + unit * s1).astype(np.float32), (x + unit * s2).astype(np.float32)  # published as float32
    assert mean_cosine(y1, x) < 0.6  # each set alone hides X
    result = cross_release(y1, y2, s1, s2, x, np.random.default_rng(2))
    assert result.solve_cosine > 0.999 and result.best_cosine > 0.999
    assert result.average_cosine < 0.7 and result.baseline < 0.7  # what composition allows is far lower
    assert result.gain > 0.99
    np.testing.assert_allclose(result.best, x, atol=1e-4)


def test_independent_draws_give_no_more_than_the_inverse_variance_average(releases: tuple) -> None:
    x, s1, s2 = releases
    rng = np.random.default_rng(3)
    y1 = x + rng.laplace(0.0, 1.0, size=x.shape) * s1
    y2 = x + rng.laplace(0.0, 1.0, size=x.shape) * s2
    result = cross_release(y1, y2, s1, s2, x, np.random.default_rng(4))
    assert result.solve_cosine < result.average_cosine  # the exact solve only amplifies independent noise
    assert result.best_cosine == result.average_cosine
    assert result.best_cosine <= result.baseline + TOLERANCE
    assert result.best_cosine > mean_cosine(y1, x)  # two releases do compose: the average beats either set
    assert result.gain == 0.0  # nothing beats what composition allows (no sampling noise read as a leak)


def test_the_average_weights_by_inverse_variance_and_equal_scales_fall_back_to_it() -> None:
    y1, y2 = np.array([[1.0, 4.0]]), np.array([[3.0, 0.0]])
    s1, s2 = np.array([1.0, 2.0]), np.array([2.0, 2.0])
    average = inverse_variance_average(y1, y2, s1, s2)
    np.testing.assert_allclose(average, [[(1.0 + 3.0 / 4) / (1 + 1 / 4), 2.0]])
    solved = shared_noise_solve(y1, y2, s1, s2)  # dimension 1: equal scales, no unique solution -> the average
    np.testing.assert_allclose(solved, [[(2.0 * 1.0 - 1.0 * 3.0) / (2.0 - 1.0), 2.0]])
    with pytest.raises(ValueError, match="scales"):
        inverse_variance_average(y1, y2, np.array([1.0, 0.0]), s2)
    with pytest.raises(ValueError, match="same rows"):
        shared_noise_solve(y1, np.ones((2, 2)), s1, s2)


def test_baseline_is_reproducible_from_its_seed_and_gain_is_on_a_0_1_scale(releases: tuple) -> None:
    x, s1, s2 = releases
    first = composition_baseline(x, s1, s2, np.random.default_rng(9))
    assert first == composition_baseline(x, s1, s2, np.random.default_rng(9))
    assert 0 < first < 1
    assert gain_over(0.5, 0.5) == 0.0 and gain_over(0.4, 0.5) == 0.0 and gain_over(1.0, 0.5) == 1.0
    assert gain_over(0.75, 0.5) == pytest.approx(0.5)
    assert np.isnan(gain_over(float("nan"), 0.5))


def test_each_setting_reports_its_worst_pair() -> None:
    def pair(best: float, gain: float, attack: float) -> dict[str, float]:
        return {"solve_cosine": best, "average_cosine": 0.3, "best_cosine": best, "baseline": 0.3, "gain": gain,
                "attack_success": attack}

    out = per_setting({("a", "b"): pair(0.999, 0.99, 0.8), ("a", "c"): pair(0.4, 0.1, 0.6),
                       ("b", "c"): pair(0.35, 0.05, 0.55)})
    assert out["a"]["cross_release_cosine"] == 0.999 and out["a"]["cross_release_partner"] == "b"
    assert out["a"]["attack_success_solved"] == 0.8
    assert out["c"]["cross_release_cosine"] == 0.4 and out["c"]["cross_release_partner"] == "a"
    assert out["c"]["cross_release_gain"] == 0.1 and out["c"]["attack_success_solved"] == 0.6
    assert per_setting({}) == {}
