"""Geometry and plausible-deniability experiments and their plots (METHODS.md §2)."""

from __future__ import annotations

import numpy as np
import pytest

from textsift import rng
from textsift.evaluation.geometry import geometry_report, knn_distances, metric_suffix
from textsift.evaluation.plots_geometry import geometry_plots
from textsift.indexes.exact_index import ExactSearcher
from textsift.indexes.params import GeometryParams

M = 10
PARAMS = GeometryParams(epsilons=[0.5, 5, 1e6], k_list=[1, 3, 10, 500], draws=50, vocab_sample=20)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return (2 * rng.generator(4, "test", "geometry").standard_normal((60, M))).astype(np.float32)


@pytest.fixture(scope="module")
def report(vectors: np.ndarray):  # noqa: ANN201 - a GeometryReport
    labels = [f"w{i}" for i in range(60)]
    return geometry_report(vectors, labels, ExactSearcher(vectors), PARAMS, beta=0.7, seed=1, key="t")


def test_noise_distance_matches_its_expectation(report) -> None:
    for d in report.deniability:
        assert d.noise_distance == pytest.approx(M * 1.7 / d.epsilon, rel=0.05)


def test_knn_distance_grows_with_k_and_k_is_capped(vectors: np.ndarray, report) -> None:
    assert list(report.knn) == [1, 3, 10, 59]
    values = list(report.knn.values())
    assert values == sorted(values) and values[0] > 0
    assert knn_distances(vectors[:1], np.array([0]), [1, 5]) == {}


def test_deniability_goes_from_many_outputs_to_the_word_itself(report) -> None:
    small, _, huge = report.deniability
    assert np.all((small.n_w >= 0) & (small.n_w <= 1)) and np.all((small.s_w >= 1) & (small.s_w <= PARAMS.draws))
    assert small.n_w.mean() < 0.2 and small.s_w.mean() > 10
    assert np.all(huge.n_w == 1) and np.all(huge.s_w == 1)
    assert report.sample_size == 20 == len(small.n_w)


def test_repeated_labels_count_as_the_same_output(vectors: np.ndarray) -> None:
    labels = ["same"] * 60  # a contextual index: every item is a pair of the one token
    out = geometry_report(vectors, labels, ExactSearcher(vectors), PARAMS, beta=0.7, seed=1, key="t")
    assert all(np.all(d.n_w == 1) and np.all(d.s_w == 1) for d in out.deniability)


def test_metrics_are_named_aggregates(report) -> None:
    metrics = report.metrics()
    assert metric_suffix(5.0) == "5" and metric_suffix(0.5) == "0.5" and metric_suffix(1e20) == "100000000000000000000"
    assert {"geometry.noise_distance.eps_0.5", "geometry.knn_distance.k_59", "deniability.N_w.mean.eps_1000000",
            "deniability.S_w.median.eps_5", "geometry.sample_size", "deniability.draws"} <= set(metrics)
    assert all(isinstance(v, float) for v in metrics.values())


def test_plots_are_png_images(report) -> None:
    plots = geometry_plots(report, "t")
    assert set(plots) == {"distance_vs_epsilon.png", "knn_distance_vs_k.png", "deniability_N_w.png",
                          "deniability_S_w.png"}
    assert all(png.startswith(b"\x89PNG") and len(png) > 5000 for png in plots.values())
