"""Steps 1, 4-6 of METHODS.md §3 as the stages use them: word choice, grid search, manifest, the params."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from textsift.budgets.allocation import unit_laplace
from textsift.budgets.params import EmbeddingDPParams, EmbeddingDPSetting, RelevanceParams
from textsift.budgets.publish import Split, choose_shape, epsilon_for, manifest, noisy, selection_metric
from textsift.budgets.sensitive_words import random_words, sample_words, step_one
from textsift.config import parse_params
from textsift.corpus import Span
from textsift.errors import ConfigError

RELEVANCE = RelevanceParams(hidden=[8], epochs=30, learning_rate=0.01)


def test_step_one_fills_irrelevant_spans_and_shifts_the_kept_ones() -> None:
    text = "Ann Lee moved to Paris in May and called 555-0101 from Rome."
    spans = [Span(0, 7, "PERSON"), Span(17, 22, "LOC"), Span(41, 49, "PHONE"), Span(55, 59, "LOC")]
    filled, kept = step_one(text, spans, {"PERSON", "PHONE"}, "something")
    assert filled == "something moved to Paris in May and called something from Rome."
    assert [filled[s:e] for s, e in kept] == ["Paris", "Rome"]


def test_step_one_drops_a_kept_span_that_overlaps_a_filled_one() -> None:
    text = "Dr Ann Lee of Boston General"
    filled, kept = step_one(text, [Span(3, 10, "PERSON"), Span(0, 10, "ORG"), Span(14, 20, "LOC")],
                            {"PERSON"}, "X")
    assert filled == "Dr X of Boston General"
    assert [filled[s:e] for s, e in kept] == ["Boston"]


def test_word_sample_is_seeded_and_independent_of_document_order() -> None:
    ids = [f"d{i}" for i in range(50)]
    spans = [[(0, 3), (5, 9)] for _ in ids]
    sample = sample_words(ids, spans, 20, seed=3)
    assert len(sample) == 20 and sample == sample_words(ids, spans, 20, seed=3)
    assert sample != sample_words(ids, spans, 20, seed=4)
    order = list(reversed(range(50)))
    reversed_sample = sample_words([ids[i] for i in order], [spans[i] for i in order], 20, seed=3)
    assert sorted((ids[order[i]], s) for i, s in reversed_sample) == sorted((ids[i], s) for i, s in sample)


def test_random_words_avoid_the_excluded_words_and_skip_short_or_numeric_tokens() -> None:
    texts = ["an apple and 42 pears", "big red cars"]
    picked = random_words(["a", "b"], texts, 10, seed=1, exclude=[(0, (3, 8))])
    words = {texts[i][s:e] for i, (s, e) in picked}
    assert words == {"and", "pears", "big", "red", "cars"}


def _splits(n: int, dim: int, seed: int) -> tuple[Split, Split]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=2 * n)
    x = rng.normal(0, 0.05, size=(2 * n, dim)).astype(np.float32)
    x[:, 0] += np.where(y == 1, 0.3, -0.3)  # only dimension 0 carries the label
    labels = ["pos" if v else "neg" for v in y]
    ids = [f"doc{i}" for i in range(2 * n)]
    unit = unit_laplace(ids, dim, seed)
    return Split(x[:n], ids[:n], labels[:n], unit[:n]), Split(x[n:], ids[n:], labels[n:], unit[n:])


def test_grid_search_scores_every_point_with_the_same_noise_and_picks_the_best() -> None:
    train, val = _splits(200, 6, seed=0)
    sensitivity = np.full(6, 0.5)
    relevance = np.array([5.0, 0.2, 0.2, 0.2, 0.2, 0.2])
    params = EmbeddingDPParams.model_validate({"grid": {"a": [1.0], "b": [0.0, 10.0], "gamma": [2.0]}})
    setting = EmbeddingDPSetting(epsilon_max=3.0)
    shape, table = choose_shape(setting, sensitivity, relevance, params.grid, train, val, RELEVANCE, seed=1)
    assert len(table) == 2 and set(table["metric"]) == {"roc_auc"}
    assert shape == (1.0, 0.0, 2.0)  # b = 0 puts the budget on the relevant dimension: far less noise there
    assert table["score"].iloc[0] > table["score"].iloc[1] + 0.1
    again_shape, again = choose_shape(setting, sensitivity, relevance, params.grid, train, val, RELEVANCE, seed=1)
    assert again_shape == shape and again["score"].tolist() == table["score"].tolist()


def test_uniform_setting_has_one_grid_row_and_even_budgets() -> None:
    train, val = _splits(60, 4, seed=2)
    setting = EmbeddingDPSetting(allocation="uniform", epsilon_max=8.0)
    shape, table = choose_shape(setting, np.ones(4), np.ones(4), EmbeddingDPParams().grid, train, val, RELEVANCE, 0)
    assert shape is None and len(table) == 1 and np.isnan(table["a"].iloc[0])
    np.testing.assert_allclose(epsilon_for(setting, np.ones(4), np.arange(1.0, 5.0), None), 2.0)


def test_noise_is_keyed_by_document_id_and_the_manifest_describes_it() -> None:
    train, _ = _splits(30, 5, seed=3)
    unit = np.random.default_rng(0).laplace(size=train.x.shape)
    setting = EmbeddingDPSetting(epsilon_max=10.0, a=1.0, b=0.5, gamma=1.0)
    sensitivity = np.full(5, 0.2)
    eps = epsilon_for(setting, sensitivity, np.arange(1.0, 6.0), (1.0, 0.5, 1.0))
    out = noisy(replace(train, unit=unit), sensitivity, eps)
    np.testing.assert_allclose(out - train.x, unit * sensitivity / eps, atol=1e-6)
    described = manifest("s", setting, (1.0, 0.5, 1.0), sensitivity, eps, "minilm", 30, key_fingerprint="0123abcd")
    assert "seed" not in described and described["key_fingerprint"] == "0123abcd" and described["gamma"] == 1.0
    assert sum(described["epsilon_d"]) == pytest.approx(10.0)
    assert "epsilon_max-DP" in described["accounting"]


def test_selection_metric_is_auc_for_two_classes_else_macro_f1() -> None:
    assert selection_metric(["a", "b", "a"]) == "roc_auc"
    assert selection_metric(["a", "b", "c"]) == "macro_f1"


@pytest.mark.parametrize(("setting", "match"), [
    ({"epsilon_max": 0}, "epsilon_max"),
    ({"epsilon_max": -1}, "epsilon_max"),
    ({"epsilon_max": 10, "p": 1.0}, "p"),
    ({"epsilon_max": 10, "p": 0}, "p"),
    ({"epsilon_max": 10, "a": 1.0}, "all of a, b, gamma"),
    ({"epsilon_max": 10, "allocation": "uniform", "a": 1.0, "b": 0.0, "gamma": 1.0}, "uniform"),
    ({"epsilon_max": 10, "a": 0.0, "b": 0.0, "gamma": 1.0}, r"a \+ b"),
    ({"epsilon_max": 10, "a": -1.0, "b": 0.0, "gamma": 1.0}, "a"),
])
def test_unsafe_or_incomplete_settings_are_config_errors_naming_the_key(setting: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as err:
        parse_params({"embedding_dp": {"settings": {"bad": setting}}})
    assert "embedding_dp.settings.bad" in str(err.value)
