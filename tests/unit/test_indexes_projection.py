"""Projected dimension and seeded Gaussian projection (METHODS.md §2)."""

from __future__ import annotations

import numpy as np
import pytest

from textsift import rng
from textsift.errors import ConfigError
from textsift.indexes.projection import gaussian_projection, project_vocabulary, projected_dim


@pytest.mark.parametrize(("d", "m"), [(320, 183), (300, 181), (768, 219)])
def test_projected_dim_reproduces_the_notebook(d: int, m: int) -> None:
    assert projected_dim(d, 0.7) == m


def test_sqrt_log_is_the_papers_smaller_dimension_and_beta_shrinks_m() -> None:
    assert projected_dim(300, 0.7, omega="sqrt_log") == 76 < projected_dim(300, 0.7)
    assert projected_dim(300, 0.9) < projected_dim(300, 0.8) < projected_dim(300, 0.7)


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1, 1.5])
def test_beta_outside_the_open_unit_interval_is_a_config_error(beta: float) -> None:
    with pytest.raises(ConfigError, match="beta"):
        projected_dim(300, beta)


def test_projection_is_seeded_and_roughly_preserves_distances() -> None:
    vectors = rng.generator(1, "test", "v").standard_normal((40, 320)).astype(np.float32)
    first = project_vocabulary([str(i) for i in range(40)], vectors, beta=0.7, delta=1e-6, omega="log",
                               generator=rng.generator(1, "test", "p"))
    again = gaussian_projection(320, 183, rng.generator(1, "test", "p"))
    assert first.projected and first.vectors.shape == (40, 183) and first.dim == 183
    np.testing.assert_array_equal(first.projection, again)
    before = np.linalg.norm(vectors[:20] - vectors[20:], axis=1)
    after = np.linalg.norm(first.vectors[:20] - first.vectors[20:], axis=1)
    assert np.all(np.abs(after / before - 1) < 0.3)


def test_projection_is_skipped_when_m_is_not_below_d() -> None:
    vectors = np.arange(150, dtype=np.float32).reshape(3, 50)
    items = project_vocabulary(["a", "b", "c"], vectors, beta=0.7, delta=1e-6, omega="log",
                               generator=rng.generator(1, "test", "p"))
    assert not items.projected and items.m == 118 and items.dim == 50 and items.projection is None
    np.testing.assert_array_equal(items.vectors, vectors)
