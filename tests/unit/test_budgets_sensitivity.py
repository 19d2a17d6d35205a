"""Per-dimension sensitivity Δf_d: k-medoids cluster spreads and their aggregation (METHODS.md §3 step 2)."""

from __future__ import annotations

import numpy as np
import pytest

from textsift import rng
from textsift.budgets.sensitivity import aggregate_sensitivity, cluster_labels, cluster_spread
from textsift.errors import ConfigError


@pytest.fixture(scope="module")
def candidates() -> np.ndarray:
    return rng.generator(3, "test", "candidates").normal(size=(40, 6))


@pytest.mark.parametrize("n_clusters", [1, 2, 4, 7])
@pytest.mark.parametrize("seed", [0, 1])
def test_cluster_spread_is_non_negative_and_at_most_the_global_spread(candidates: np.ndarray, n_clusters: int,
                                                                      seed: int) -> None:
    spread = cluster_spread(candidates, n_clusters, seed)
    assert spread.shape == (candidates.shape[1],)
    assert (spread >= 0).all()
    assert (spread <= np.ptp(candidates, axis=0) + 1e-12).all()


def test_one_cluster_gives_the_global_spread(candidates: np.ndarray) -> None:
    np.testing.assert_allclose(cluster_spread(candidates, 1, 0), np.ptp(candidates, axis=0))


def test_separated_senses_are_clustered_apart_so_their_distance_does_not_count() -> None:
    g = rng.generator(3, "test", "senses")
    near, far = g.normal(0.0, 0.1, size=(15, 4)), g.normal(50.0, 0.1, size=(9, 4))
    points = np.vstack([near, far])[g.permutation(24)]
    expected = np.maximum(np.ptp(near, axis=0), np.ptp(far, axis=0))
    np.testing.assert_allclose(cluster_spread(points, 2, 5), expected)
    assert (cluster_spread(points, 2, 5) < np.ptp(points, axis=0) / 10).all()
    labels = cluster_labels(points, 2, 5)
    assert len(set(labels[(points[:, 0] > 25)])) == 1 and len(set(labels[(points[:, 0] < 25)])) == 1


def test_identical_or_single_candidates_have_zero_spread() -> None:
    same = np.tile(np.array([[0.3, -1.2, 4.0]]), (5, 1))
    np.testing.assert_array_equal(cluster_spread(same, 2, 0), np.zeros(3))
    np.testing.assert_array_equal(cluster_spread(same[:1], 3, 0), np.zeros(3))


def test_more_clusters_than_candidates_is_clipped_to_singletons(candidates: np.ndarray) -> None:
    np.testing.assert_array_equal(cluster_spread(candidates[:5], 50, 0), np.zeros(candidates.shape[1]))


def test_cluster_spread_is_deterministic_for_a_seed_and_leaves_its_input_alone(candidates: np.ndarray) -> None:
    before = candidates.copy()
    np.testing.assert_array_equal(cluster_spread(candidates, 3, 9), cluster_spread(candidates, 3, 9))
    np.testing.assert_array_equal(candidates, before)


def test_invalid_cluster_inputs_are_rejected(candidates: np.ndarray) -> None:
    with pytest.raises(ConfigError, match="n_clusters"):
        cluster_spread(candidates, 0, 0)
    with pytest.raises(ValueError, match="candidates"):
        cluster_spread(np.zeros((0, 3)), 2, 0)
    with pytest.raises(ValueError, match="candidates"):
        cluster_spread(np.zeros(3), 2, 0)


@pytest.fixture(scope="module")
def spreads() -> np.ndarray:
    return rng.generator(3, "test", "spreads").exponential(size=(50, 5))


def test_aggregations_follow_their_definition_and_are_ordered(spreads: np.ndarray) -> None:
    by_kind = {agg: aggregate_sensitivity(spreads, agg) for agg in ("max", "mean", "p95")}
    np.testing.assert_allclose(by_kind["max"], spreads.max(axis=0))
    np.testing.assert_allclose(by_kind["mean"], spreads.mean(axis=0))
    np.testing.assert_allclose(by_kind["p95"], np.percentile(spreads, 95, axis=0))
    assert (by_kind["mean"] <= by_kind["p95"]).all() and (by_kind["p95"] <= by_kind["max"]).all()
    np.testing.assert_array_equal(aggregate_sensitivity(spreads), by_kind["max"])  # max is the default


def test_floor_keeps_every_sensitivity_positive(spreads: np.ndarray) -> None:
    zeros = np.zeros((3, 4))
    np.testing.assert_array_equal(aggregate_sensitivity(zeros), np.full(4, 1e-6))
    floored = aggregate_sensitivity(spreads, "mean", min_sensitivity=1.0)
    np.testing.assert_array_equal(floored, np.maximum(spreads.mean(axis=0), 1.0))
    assert (floored >= 1.0).all()


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"agg": "median"}, ConfigError, "sensitivity_agg"),
    ({"min_sensitivity": 0.0}, ConfigError, "min_sensitivity"),
    ({"min_sensitivity": float("nan")}, ConfigError, "min_sensitivity"),
])
def test_invalid_aggregation_settings_are_config_errors(spreads: np.ndarray, kwargs: dict, error: type,
                                                        match: str) -> None:
    with pytest.raises(error, match=match):
        aggregate_sensitivity(spreads, **kwargs)


@pytest.mark.parametrize("bad", [np.zeros((0, 4)), -np.ones((2, 4)), np.full((2, 2), np.nan), np.ones(4)])
def test_empty_negative_or_malformed_spreads_are_rejected(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="spreads"):
        aggregate_sensitivity(bad)
