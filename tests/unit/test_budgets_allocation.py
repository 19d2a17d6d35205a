"""Per-dimension budgets ε_d and the Laplace noise they calibrate (METHODS.md §3 steps 4-5)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from textsift import rng
from textsift.budgets.allocation import (
    allocate_epsilon,
    laplace_noise,
    laplace_scale,
    noise_half_width,
    normalized_relevance,
    uniform_epsilon,
    unscaled_epsilon,
)
from textsift.errors import ConfigError

DIM = 12


@pytest.fixture(scope="module")
def sensitivity() -> np.ndarray:
    return rng.generator(3, "test", "sensitivity").uniform(0.05, 2.0, size=DIM)


@pytest.fixture(scope="module")
def relevance() -> np.ndarray:
    return rng.generator(3, "test", "relevance").exponential(size=DIM)


@pytest.mark.parametrize(("epsilon_max", "p", "a", "b", "gamma"), [
    (1.0, 0.9, 1.0, 0.1, 1.0), (8.0, 0.5, 0.3, 0.0, 2.0), (0.01, 0.99, 0.0, 1.0, 1.0), (100.0, 0.1, 2.0, 5.0, 0.5),
])
def test_budgets_sum_to_epsilon_max(sensitivity: np.ndarray, relevance: np.ndarray, epsilon_max: float, p: float,
                                    a: float, b: float, gamma: float) -> None:
    eps = allocate_epsilon(sensitivity, relevance, epsilon_max, p, a, b, gamma)
    assert eps.shape == (DIM,) and (eps > 0).all()
    np.testing.assert_allclose(eps.sum(), epsilon_max, rtol=1e-9)


@pytest.mark.parametrize(("a", "b", "gamma"), [(1.0, 0.1, 1.0), (1.0, 0.0, 0.5), (0.2, 3.0, 2.0)])
def test_more_relevant_dimensions_get_more_budget(sensitivity: np.ndarray, relevance: np.ndarray, a: float,
                                                  b: float, gamma: float) -> None:
    eps = allocate_epsilon(sensitivity, relevance, 4.0, 0.9, a, b, gamma)
    order = np.argsort(relevance)
    assert (np.diff(eps[order]) > 0).all()
    scale = laplace_scale(sensitivity, eps)
    uniform_scale = laplace_scale(sensitivity, uniform_epsilon(DIM, 4.0))
    top = order[-1]
    assert scale[top] / sensitivity[top] < uniform_scale[top] / sensitivity[top]  # less noise per unit of Δf


def test_gamma_zero_or_a_zero_gives_the_uniform_baseline(sensitivity: np.ndarray, relevance: np.ndarray) -> None:
    """w_c,d / Δf_d = a / r̂^γ + b is then the same constant in every dimension, so ε_d is uniform."""
    uniform = uniform_epsilon(DIM, 3.0)
    np.testing.assert_allclose(allocate_epsilon(sensitivity, relevance, 3.0, 0.9, 1.0, 0.2, 0.0), uniform, rtol=1e-12)
    np.testing.assert_allclose(allocate_epsilon(sensitivity, relevance, 3.0, 0.9, 0.0, 0.2, 2.0), uniform, rtol=1e-12)


def test_after_rescaling_the_budgets_depend_neither_on_sensitivity_nor_on_p(sensitivity: np.ndarray,
                                                                            relevance: np.ndarray) -> None:
    """Δf_d cancels in Δf_d·ln(1/(1−p))/w_c,d and ln(1/(1−p)) in the rescaling; both still set the noise scale."""
    base = allocate_epsilon(sensitivity, relevance, 2.0, 0.9, 1.0, 0.1, 1.0)
    np.testing.assert_allclose(allocate_epsilon(np.ones(DIM), relevance, 2.0, 0.9, 1.0, 0.1, 1.0), base, rtol=1e-12)
    np.testing.assert_allclose(allocate_epsilon(sensitivity, relevance, 2.0, 0.3, 1.0, 0.1, 1.0), base, rtol=1e-12)
    np.testing.assert_allclose(allocate_epsilon(sensitivity, relevance * 7.0, 2.0, 0.9, 1.0, 0.1, 1.0), base,
                               rtol=1e-12)  # only r̂ = r / mean(r) matters


def test_uniform_baseline() -> None:
    eps = uniform_epsilon(7, 3.5)
    np.testing.assert_allclose(eps, np.full(7, 0.5))
    np.testing.assert_allclose(eps.sum(), 3.5, rtol=1e-12)
    with pytest.raises(ConfigError, match="dim"):
        uniform_epsilon(0, 1.0)
    with pytest.raises(ConfigError, match="epsilon_max"):
        uniform_epsilon(3, 0.0)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 0.99])
def test_unscaled_noise_stays_within_the_half_width_with_probability_p(sensitivity: np.ndarray,
                                                                       relevance: np.ndarray, p: float) -> None:
    width = noise_half_width(sensitivity, relevance, 0.7, 0.2, 1.5)
    lam = laplace_scale(sensitivity, unscaled_epsilon(sensitivity, width, p))
    np.testing.assert_allclose(1.0 - np.exp(-width / lam), p, rtol=1e-12)  # P(|Lap(0, λ)| <= w)
    draws = rng.generator(3, "test", f"coverage-{p}").laplace(0.0, lam, size=(20_000, DIM))
    inside = (np.abs(draws) <= width).mean(axis=0)
    assert np.abs(inside - p).max() < 4.5 * np.sqrt(p * (1 - p) / 20_000)


def test_rescaled_coverage_is_one_minus_one_minus_p_to_the_scale_factor(sensitivity: np.ndarray,
                                                                        relevance: np.ndarray) -> None:
    p, epsilon_max = 0.9, 3.0
    width = noise_half_width(sensitivity, relevance, 1.0, 0.1, 1.0)
    raw = unscaled_epsilon(sensitivity, width, p)
    eps = allocate_epsilon(sensitivity, relevance, epsilon_max, p, 1.0, 0.1, 1.0)
    factor = epsilon_max / raw.sum()
    np.testing.assert_allclose(eps, raw * factor, rtol=1e-12)
    coverage = 1.0 - np.exp(-width / laplace_scale(sensitivity, eps))
    np.testing.assert_allclose(coverage, 1.0 - (1.0 - p) ** factor, rtol=1e-9)


def test_relevance_is_normalized_to_mean_one_and_floored() -> None:
    r_hat = normalized_relevance(np.array([0.0, 1.0, 3.0]))
    np.testing.assert_allclose(r_hat, [1e-3, 0.75, 2.25])
    eps = allocate_epsilon(np.ones(3), np.array([0.0, 1.0, 3.0]), 1.0, 0.9, 1.0, 0.0, 1.0)
    np.testing.assert_allclose(eps, np.array([1e-3, 0.75, 2.25]) / 3.001, rtol=1e-12)  # ε_d ∝ r̂_d when b = 0, γ = 1


GOOD = {"epsilon_max": 1.0, "p": 0.9, "a": 1.0, "b": 0.1, "gamma": 1.0}


@pytest.mark.parametrize(("override", "match"), [
    ({"epsilon_max": 0.0}, "epsilon_max"), ({"epsilon_max": -2.0}, "epsilon_max"),
    ({"epsilon_max": float("inf")}, "epsilon_max"), ({"epsilon_max": float("nan")}, "epsilon_max"),
    ({"p": 0.0}, "p must"), ({"p": 1.0}, "p must"), ({"p": float("nan")}, "p must"),
    ({"a": -0.1}, "a must"), ({"b": -0.1}, "b must"), ({"a": 0.0, "b": 0.0}, r"a \+ b"),
    ({"gamma": -1.0}, "gamma"), ({"gamma": float("nan")}, "gamma"), ({"gamma": 120.0}, "gamma"),
])
def test_invalid_parameters_raise_a_config_error_naming_them(sensitivity: np.ndarray, override: dict,
                                                             match: str) -> None:
    relevance = np.linspace(0.0, 1.0, DIM)  # one zero dimension: a huge gamma underflows its budget
    with pytest.raises(ConfigError, match=match):
        allocate_epsilon(sensitivity, relevance, **{**GOOD, **override})


@pytest.mark.parametrize(("sens", "rel", "match"), [
    (np.ones(4), np.ones(5), "shape"), (np.array([1.0, 0.0, 1.0]), np.ones(3), "sensitivity"),
    (np.array([1.0, np.inf]), np.ones(2), "sensitivity"), (np.ones((2, 2)), np.ones((2, 2)), "sensitivity"),
    (np.ones(3), np.array([1.0, -1.0, 1.0]), "relevance"), (np.ones(3), np.zeros(3), "relevance"),
])
def test_invalid_vectors_raise_a_config_error_naming_them(sens: np.ndarray, rel: np.ndarray, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        allocate_epsilon(sens, rel, **GOOD)


@pytest.fixture(scope="module")
def budget(sensitivity: np.ndarray, relevance: np.ndarray) -> np.ndarray:
    return allocate_epsilon(sensitivity, relevance, 6.0, 0.9, 1.0, 0.2, 1.0)


def test_noise_is_laplace_with_scale_sensitivity_over_epsilon(sensitivity: np.ndarray, budget: np.ndarray) -> None:
    n = 20_000
    noise = laplace_noise(np.zeros((n, DIM)), [f"doc-{i}" for i in range(n)], sensitivity, budget, key=5)
    scale = sensitivity / budget
    for d in (0, int(np.argmax(scale)), int(np.argmin(scale)), DIM - 1):
        assert stats.kstest(noise[:, d], "laplace", args=(0.0, scale[d])).pvalue > 0.01
        assert stats.kstest(noise[:, d], "laplace", args=(0.0, 1.1 * scale[d])).pvalue < 1e-4  # the test has power
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 4.5 / np.sqrt(n)


def test_noise_depends_only_on_seed_and_id_not_on_order_or_batch(sensitivity: np.ndarray,
                                                                 budget: np.ndarray) -> None:
    x = rng.generator(3, "test", "embeddings").normal(size=(9, DIM))
    ids = [f"s{i}" for i in range(9)]
    whole = laplace_noise(x, ids, sensitivity, budget, key=1)
    order = rng.generator(3, "test", "order").permutation(9)
    shuffled = laplace_noise(x[order], [ids[i] for i in order], sensitivity, budget, key=1)
    np.testing.assert_array_equal(shuffled, whole[order])
    split = np.vstack([laplace_noise(x[:4], ids[:4], sensitivity, budget, key=1),
                       laplace_noise(x[4:], ids[4:], sensitivity, budget, key=1)])
    np.testing.assert_array_equal(split, whole)
    renamed = laplace_noise(x, [f"t{i}" for i in range(9)], sensitivity, budget, key=1)
    assert (renamed != whole).all()
    assert (laplace_noise(x, ids, sensitivity, budget, key=2) != whole).all()


def test_same_embedding_under_different_ids_gets_different_noise(sensitivity: np.ndarray,
                                                                 budget: np.ndarray) -> None:
    x = np.ones((2, DIM))
    out = laplace_noise(x, ["a", "b"], sensitivity, budget, key=0)
    assert (out[0] != out[1]).all()


@pytest.mark.parametrize(("dtype", "expected"), [(np.float32, np.float32), (np.float64, np.float64),
                                                 (np.int64, np.float64)])
def test_noise_returns_a_new_array_keeping_float_dtypes(sensitivity: np.ndarray, budget: np.ndarray, dtype: type,
                                                        expected: type) -> None:
    x = rng.generator(3, "test", "dtype").normal(size=(5, DIM)).astype(dtype)
    before = x.copy()
    out = laplace_noise(x, list("abcde"), sensitivity, budget, key=3)
    assert out.dtype == expected and out.shape == x.shape
    assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, before)
    reference = laplace_noise(x.astype(np.float64), list("abcde"), sensitivity, budget, key=3)
    np.testing.assert_allclose(out, reference.astype(expected), rtol=1e-6)


def test_noise_rejects_mismatched_or_repeated_ids(sensitivity: np.ndarray, budget: np.ndarray) -> None:
    x = np.zeros((3, DIM))
    with pytest.raises(ValueError, match="3 embeddings"):
        laplace_noise(x, ["a", "b"], sensitivity, budget, key=0)
    with pytest.raises(ValueError, match="unique"):
        laplace_noise(x, ["a", "b", "a"], sensitivity, budget, key=0)
    with pytest.raises(ValueError, match="embeddings"):
        laplace_noise(np.zeros((3, DIM + 1)), ["a", "b", "c"], sensitivity, budget, key=0)
    with pytest.raises(ConfigError, match="epsilon_d"):
        laplace_noise(x, ["a", "b", "c"], sensitivity, np.zeros(DIM), key=0)


def test_laplace_scale_is_sensitivity_over_epsilon(sensitivity: np.ndarray, budget: np.ndarray) -> None:
    np.testing.assert_allclose(laplace_scale(sensitivity, budget), sensitivity / budget, rtol=1e-15)
    with pytest.raises(ConfigError, match="shape"):
        laplace_scale(sensitivity, budget[:-1])
