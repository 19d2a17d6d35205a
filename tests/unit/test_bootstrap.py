"""Bootstrap intervals (METHODS.md §5): the vectorized statistics equal scikit-learn's, and the intervals cover."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

from textsift.corpus import Span
from textsift.evaluation import bootstrap
from textsift.evaluation.bootstrap import ratio_interval, utility_intervals
from textsift.evaluation.leaks import leak_table
from textsift.evaluation.privacy import leak_counts, leak_rates


def test_vectorized_macro_f1_and_auc_equal_scikit_learn_on_every_resample() -> None:
    rng = np.random.default_rng(0)
    truth_all = rng.integers(0, 3, 60)
    predicted_all = np.where(rng.random(60) < 0.7, truth_all, rng.integers(0, 3, 60))
    rows = rng.integers(0, 60, size=(20, 60))
    f1 = bootstrap._macro_f1(truth_all[rows], predicted_all[rows], 3)
    for i, row in enumerate(rows):
        assert f1[i] == pytest.approx(f1_score(truth_all[row], predicted_all[row], average="macro"))
    positive_all = rng.random(60) < 0.4
    score_all = np.round(rng.random(60) + positive_all * 0.5, 1)  # rounded: ties must be averaged
    auc = bootstrap._roc_auc(positive_all[rows], score_all[rows])
    for i, row in enumerate(rows):
        assert auc[i] == pytest.approx(roc_auc_score(positive_all[row], score_all[row]))


def test_accuracy_interval_covers_the_true_rate_about_95_percent_of_the_time() -> None:
    """Correct predictions with probability 0.8 on 400 documents, 200 independent test splits."""
    data = np.random.default_rng(1)
    covered = 0
    for trial in range(200):
        labels = ["a" if x else "b" for x in data.random(400) < 0.5]
        correct = data.random(400) < 0.8
        predicted = [lab if ok else ("b" if lab == "a" else "a") for lab, ok in zip(labels, correct, strict=True)]
        proba = np.array([[1.0, 0.0] if p == "a" else [0.0, 1.0] for p in predicted])
        low, high = utility_intervals(["a", "b"], proba, labels, 1000, 0.95, np.random.default_rng(trial))["accuracy"]
        covered += low <= 0.8 <= high
    assert 0.90 <= covered / 200 <= 0.99


def test_a_perfect_classifier_has_a_degenerate_interval_and_auc_is_nan_for_three_classes() -> None:
    labels = ["a", "b", "c"] * 20
    proba = np.eye(3)[[0, 1, 2] * 20]
    intervals = utility_intervals(["a", "b", "c"], proba, labels, 200, 0.95, np.random.default_rng(0))
    assert intervals["accuracy"] == (1.0, 1.0) and intervals["macro_f1"] == (1.0, 1.0)
    assert all(np.isnan(intervals["roc_auc"]))


def test_big_test_splits_are_resampled_in_blocks_with_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    leaked, spans = np.r_[np.ones(300), np.zeros(700)], np.ones(1000)
    whole = ratio_interval(leaked, spans, 500, 0.9, np.random.default_rng(3))
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 7_000)  # 7 resamples per block
    blocked = ratio_interval(leaked, spans, 500, 0.9, np.random.default_rng(3))
    assert whole[0] < 0.3 < whole[1]
    assert blocked == pytest.approx(whole, abs=0.01)  # a different stream of draws, the same distribution


def test_leak_table_counts_per_label_and_its_all_row_equals_the_leak_rate() -> None:
    originals = ["Call Anna Berg at 555-0101.", "Bob lives in Oslo.", "Nothing here."]
    spans = [[Span(5, 14, "PERSON"), Span(18, 26, "PHONE")], [Span(0, 3, "PERSON"), Span(13, 17, "LOC")], []]
    outputs = ["Call [PERSON] at 555-0101.", "Bob lives in [LOC].", "Nothing here."]
    counts = leak_counts(originals, spans, outputs)
    assert counts[0] == {"PERSON": {"spans": 1, "leaked": 0}, "PHONE": {"spans": 1, "leaked": 1}}
    table = leak_table({"red": counts}, 200, 0.95, seed=7).set_index("label")
    assert table.loc["all", "spans"] == 4 and table.loc["all", "leaked"] == 2
    assert table.loc["all", "leak_rate"] == pytest.approx(leak_rates(originals, spans, outputs)["leak.rate"])
    assert table.loc["PERSON", "leaked"] == 1 and table.loc["LOC", "leak_rate"] == 0.0
    assert table.loc["all", "leak_rate_ci_low"] <= 0.5 <= table.loc["all", "leak_rate_ci_high"]
