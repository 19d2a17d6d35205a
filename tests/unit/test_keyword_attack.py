"""The keyword-inference attacker (METHODS.md §3 evaluation) and the published-embeddings GX suite."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from textsift.evaluation.keyword_attack import (
    advantage,
    attack_success,
    strongest,
    targets,
    train_attackers,
    train_noise_aware_attackers,
)
from textsift.quality.embeddings import check_embeddings

N, DIM = 400, 16


@pytest.fixture
def planted() -> tuple[np.ndarray, list[set[str]], list[set[tuple[str, str]]], np.ndarray]:
    """Documents where LOC presence moves dimension 0 and the word 'paris' moves dimension 1."""
    rng = np.random.default_rng(0)
    has_loc = rng.random(N) < 0.4
    has_paris = has_loc & (rng.random(N) < 0.5)
    x = rng.normal(0, 0.1, size=(N, DIM))
    x[:, 0] += 0.5 * has_loc
    x[:, 1] += 0.5 * has_paris
    labels = [{"LOC"} if loc else set() for loc in has_loc]
    words = [{("LOC", "paris")} if p else ({("LOC", "rome")} if loc else set())
             for loc, p in zip(has_loc, has_paris, strict=True)]
    train = np.arange(N) < N // 2
    return x, labels, words, train


def test_targets_need_enough_positives_and_negatives_and_hide_the_words(planted: tuple) -> None:
    x, labels, words, train = planted
    found = targets(labels, words, train, replace_labels={"PERSON"}, min_positives=10, max_words=5)
    assert [t.name for t in found] == ["label:LOC", "word#1", "word#2"]
    assert all(t.group == "kept" for t in found)
    assert not any("paris" in t.name or "rome" in t.name for t in found)  # raw words never become names
    rare = targets(labels, words, train, replace_labels={"LOC"}, min_positives=N, max_words=5)
    assert rare == []
    filled = targets(labels, words, train, replace_labels={"LOC"}, min_positives=10, max_words=0)
    assert [(t.name, t.group) for t in filled] == [("label:LOC", "filled")]


def test_attacker_succeeds_on_clean_embeddings_and_falls_to_chance_under_heavy_noise(planted: tuple) -> None:
    x, labels, words, train = planted
    found = targets(labels, words, train, replace_labels=(), min_positives=10, max_words=2)
    attackers = train_attackers(x, train, found, seed=0)
    test = ~train
    clean = attack_success(attackers, found, x, test)
    assert clean["label:LOC"] > 0.95 and clean["success.all"] > 0.85
    noisy = x + np.random.default_rng(1).laplace(0, 5.0, size=x.shape)
    chance = attack_success(attackers, found, noisy, test)
    assert abs(chance["success.all"] - 0.5) < 0.08
    assert np.isnan(chance["success.filled"])  # no filled targets: no mean, not a made-up number


def test_noise_aware_attacker_beats_the_clean_trained_one_under_published_scales() -> None:
    """The word moves eight dimensions; the published scales leave one of them nearly clean and bury the other
    seven (and most of the rest) in noise. Trained on clean embeddings the attacker leans on all eight and is at
    near chance on the published set; trained on clean + noise of the published scales it finds the clean dimension.
    A report that only shows the clean-trained attacker would call this set safe."""
    n, dim = 1200, 64
    rng = np.random.default_rng(0)
    has = rng.random(n) < 0.4
    x = rng.normal(0, 0.05, size=(n, dim))
    x[:, :8] += 0.1 * has[:, None]
    train = np.arange(n) < 800
    found = targets([{"LOC"} if h else set() for h in has], [set()] * n, train, (), 10, 0)
    scale = np.full(dim, 0.02)
    scale[1:8], scale[20:] = 50.0, 1e3  # tiny ε_d: λ_d orders of magnitude above the signal
    published = x + rng.laplace(0.0, 1.0, size=x.shape) * scale
    clean = attack_success(train_attackers(x, train, found, seed=0), found, published, ~train)
    aware = attack_success(train_noise_aware_attackers(x, train, found, scale, np.random.default_rng(5), seed=0),
                           found, published, ~train)
    assert clean["success.all"] < 0.6  # near chance (0.54-0.56 over seeds)
    assert aware["success.all"] > 0.72 and aware["success.all"] - clean["success.all"] > 0.15  # 0.77-0.80
    reported = strongest(clean, aware)
    assert reported["success.all"] == aware["success.all"] and np.isnan(reported["success.filled"])
    again = train_noise_aware_attackers(x, train, found, scale, np.random.default_rng(5), seed=0)
    assert attack_success(again, found, published, ~train)["success.all"] == aware["success.all"]  # reproducible


def test_strongest_takes_the_larger_per_group_and_advantage_rescales_to_0_1() -> None:
    a = {"success.all": 0.6, "success.kept": 0.7, "success.filled": float("nan")}
    b = {"success.all": 0.65, "success.kept": 0.5, "success.filled": 0.55}
    assert strongest(a, b) == {"success.all": 0.65, "success.kept": 0.7, "success.filled": 0.55}
    assert advantage(0.5) == 0.0 and advantage(0.4) == 0.0 and advantage(1.0) == 1.0
    assert advantage(0.698) == pytest.approx(0.396)
    assert np.isnan(advantage(float("nan")))


def test_embeddings_suite_passes_a_good_set_and_names_what_breaks() -> None:
    rows = pd.DataFrame({"doc_id": ["a", "b", "c"], "split": ["train", "test", "test"], "label": ["x", "y", "x"]})
    good = rows.assign(embedding=[np.ones(4, dtype=np.float32)] * 3)
    assert check_embeddings(rows, good, 4).success
    bad = rows.assign(embedding=[np.ones(4), np.array([1.0, np.nan, 0, 0]), np.ones(3)])
    report = check_embeddings(rows, bad, 4)
    assert not report.success
    failed = " ".join(report.failed)
    assert "width" in failed and "finite" in failed
    swapped = good.assign(label=["y", "y", "x"])
    assert "same_label" in " ".join(check_embeddings(rows, swapped, 4).failed)


@pytest.mark.parametrize("attack", [[0.7, 0.6], [np.nan, np.nan]])
def test_embedding_plot_draws_with_or_without_attack_targets(attack: list[float]) -> None:
    """A corpus where no sensitive word is frequent enough has no attack values: the plot still draws."""
    from textsift.evaluation.plots import embedding_dp_png

    table = pd.DataFrame({"allocation": ["lrp", "uniform"], "epsilon_max": [100.0, 100.0], "utility": [0.6, 0.5],
                          "attack_success": attack})
    references = pd.DataFrame({"setting": ["original", "filled"], "utility": [0.7, 0.7], "attack_success": attack})
    assert embedding_dp_png(table, references, "roc_auc").startswith(b"\x89PNG")
    assert embedding_dp_png(table.iloc[:0], references, "roc_auc").startswith(b"\x89PNG")
