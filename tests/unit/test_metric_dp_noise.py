"""Metric-DP noise: uniform direction, Gamma magnitude, validated ε and β (METHODS.md §2)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats

from textsift import rng
from textsift.errors import ConfigError
from textsift.mechanisms.metric_dp.noise import check_privacy_params, sample_noise
from textsift.mechanisms.metric_dp.params import MetricDPSetting

M, N = 183, 4000


@pytest.fixture(scope="module")
def noise() -> np.ndarray:
    return sample_noise(rng.generator(11, "test", "noise"), N, M, epsilon=10.0, beta=0.7)


def test_magnitude_is_gamma_m_with_scale_sensitivity_over_epsilon(noise: np.ndarray) -> None:
    norms = np.linalg.norm(noise, axis=1)
    assert stats.kstest(norms, "gamma", args=(M, 0, 1.7 / 10.0)).pvalue > 0.01
    assert stats.kstest(norms, "gamma", args=(M, 0, 1.7 / 9.0)).pvalue < 1e-6  # the test has power
    assert norms.mean() == pytest.approx(M * 1.7 / 10.0, rel=0.01)


def test_direction_is_uniform_on_the_sphere(noise: np.ndarray) -> None:
    unit = noise / np.linalg.norm(noise, axis=1, keepdims=True)
    half = (M - 1) / 2  # a coordinate u of a uniform unit vector: (u + 1) / 2 ~ Beta((m-1)/2, (m-1)/2)
    axis = rng.generator(11, "test", "axis").standard_normal(M)
    for u in (unit[:, 0], unit[:, M - 1], unit @ (axis / np.linalg.norm(axis))):
        assert stats.kstest((u + 1) / 2, "beta", args=(half, half)).pvalue > 0.01
    assert np.abs(unit.mean(axis=0)).max() < 4.5 / np.sqrt(N * M)  # no preferred direction
    assert stats.kstest((unit[:, 0] * 3 + 1) / 2, "beta", args=(half, half)).pvalue < 1e-6


def test_same_generator_seed_gives_the_same_noise() -> None:
    a = sample_noise(rng.generator(1, "metric_dp", "doc-1"), 5, 8, 1.0, 0.5)
    b = sample_noise(rng.generator(1, "metric_dp", "doc-1"), 5, 8, 1.0, 0.5)
    np.testing.assert_array_equal(a, b)
    assert sample_noise(rng.generator(1, "metric_dp", "doc-1"), 0, 8, 1.0, 0.5).shape == (0, 8)


@pytest.mark.parametrize(("epsilon", "beta", "match"), [(0.0, 0.7, "epsilon"), (-1.0, 0.7, "epsilon"),
                                                        (1.0, 0.0, "beta"), (1.0, 1.0, "beta"), (1.0, 2.0, "beta")])
def test_invalid_epsilon_or_beta_is_a_clear_config_error(epsilon: float, beta: float, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        check_privacy_params(epsilon, beta)
    with pytest.raises(ConfigError, match=match):
        sample_noise(rng.generator(1, "test"), 3, 4, epsilon, beta)


def test_setting_rejects_non_positive_epsilon() -> None:
    with pytest.raises(ValidationError, match="epsilon"):
        MetricDPSetting(kind="metric_dp", index="w2v", epsilon=0)
