"""Great Expectations suites: clean data passes, each corruption fails by name, no text leaks."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from textsift.errors import QualityError
from textsift.quality.suites import check_corpus, check_metrics

FRACTIONS = {"train": 0.7, "validation": 0.1, "test": 0.2}
LABELS = {"pos", "neg"}


def canonical_frame(n: int = 20) -> pd.DataFrame:
    """A clean corpus: 14 train, 2 validation, 4 test; each text holds one in-bounds span."""
    splits = ["train"] * 14 + ["validation"] * 2 + ["test"] * 4
    texts = [f"Call Ann on 555-01{i:02d} today." for i in range(n)]
    return pd.DataFrame(
        {
            "doc_id": [f"d{i:03d}" for i in range(n)],
            "text": texts,
            "label": ["pos" if i % 2 else "neg" for i in range(n)],
            "split": splits,
            "spans": [[{"start": 5, "end": 8, "label": "PERSON"}] for _ in range(n)],
        }
    )


def corpus_failures(frame: pd.DataFrame) -> list[str]:
    report = check_corpus(frame, labels=LABELS, split_fractions=FRACTIONS)
    assert not report.success
    return report.failed


def test_clean_corpus_passes() -> None:
    report = check_corpus(canonical_frame(), labels=LABELS, split_fractions=FRACTIONS)
    assert report.success, report.details
    assert report.failed == []
    assert report.evaluated == 14
    assert report.to_metrics() == {"quality.corpus.evaluated": 14, "quality.corpus.failed": 0}
    report.raise_if_failed()


def test_corpus_spans_none_and_defaults_pass() -> None:
    frame = canonical_frame()
    frame["spans"] = None
    assert check_corpus(frame).success


def test_duplicate_doc_id_fails() -> None:
    frame = canonical_frame()
    frame.loc[1, "doc_id"] = "d000"
    report = check_corpus(frame)
    assert report.failed == ["expect_column_values_to_be_unique(doc_id)"]
    assert report.details == {"expect_column_values_to_be_unique(doc_id)": "unexpected_count=2"}


@pytest.mark.parametrize("text", ["", "   ", None])
def test_empty_or_missing_text_fails(text: str | None) -> None:
    frame = canonical_frame()
    frame["spans"] = None
    frame.loc[3, "text"] = text
    expected = "expect_column_values_to_not_be_null" if text is None else "expect_column_values_to_be_between"
    assert corpus_failures(frame) == [f"{expected}(text_len)"]


def test_null_label_fails() -> None:
    frame = canonical_frame()
    frame.loc[2, "label"] = None
    assert corpus_failures(frame) == ["expect_column_values_to_not_be_null(label)"]


def test_unknown_label_fails() -> None:
    frame = canonical_frame()
    frame.loc[2, "label"] = "neutral"
    assert corpus_failures(frame) == ["expect_column_values_to_be_in_set(label)"]


def test_unknown_split_value_fails() -> None:
    frame = canonical_frame()
    frame.loc[0, "split"] = "holdout"
    assert "expect_column_values_to_be_in_set(split)" in check_corpus(frame).failed


def test_missing_split_fails() -> None:
    frame = canonical_frame()
    frame.loc[frame["split"] == "test", "split"] = "train"
    assert check_corpus(frame).failed == ["expect_column_distinct_values_to_contain_set(split)"]


def test_split_fractions_off_fails() -> None:
    frame = canonical_frame()
    frame.loc[:5, "split"] = "test"  # train 8/20, test 10/20
    report = check_corpus(frame, split_fractions=FRACTIONS, tolerance=0.05)
    assert report.failed == [
        "expect_column_mean_to_be_between(is_test)",
        "expect_column_mean_to_be_between(is_train)",
    ]
    assert report.details["expect_column_mean_to_be_between(is_test)"] == "observed=0.5"
    assert check_corpus(frame, split_fractions=FRACTIONS, tolerance=0.5).success


def test_span_past_end_of_text_fails() -> None:
    frame = canonical_frame()
    frame.at[4, "spans"] = [{"start": 5, "end": len(frame.loc[4, "text"]) + 1, "label": "PERSON"}]
    assert corpus_failures(frame) == ["expect_column_values_to_be_between(bad_spans)"]


def test_empty_corpus_fails() -> None:
    assert "expect_table_row_count_to_be_between(table)" in check_corpus(canonical_frame().iloc[:0]).failed


def test_missing_column_raises() -> None:
    with pytest.raises(QualityError, match="lacks columns"):
        check_corpus(canonical_frame().drop(columns=["spans"]))


def test_failure_message_never_holds_text_or_values() -> None:
    secret = "SECRET-jane.doe@example.com-555-0199"
    frame = canonical_frame()
    frame.loc[0, "text"] = f"my mail is {secret}"
    frame.loc[1, "doc_id"] = "d000"  # duplicate of the row holding the secret
    frame.loc[2, "label"] = secret  # GX would quote these in partial_unexpected_list
    frame.loc[3, "split"] = secret
    frame.at[0, "spans"] = [{"start": 11, "end": 999, "label": secret}]
    report = check_corpus(frame, labels=LABELS, split_fractions=FRACTIONS, name="leak")
    assert not report.success and len(report.failed) >= 4
    assert secret not in repr(report)
    with pytest.raises(QualityError) as caught:
        report.raise_if_failed()
    message = str(caught.value)
    assert secret not in message
    assert "quality suite 'leak'" in message
    assert "expect_column_values_to_be_unique(doc_id): unexpected_count=2" in message
    assert "expect_column_values_to_be_in_set(label): unexpected_count=1" in message


def test_good_metrics_pass() -> None:
    metrics = {"test.accuracy": 0.9, "test.macro_f1": 0.8, "test.roc_auc": 1.0, "leak_rate": 0.0, "n": 2e3}
    report = check_metrics(metrics)
    assert report.success
    assert report.evaluated == 1 + 5 + 4
    assert report.to_metrics() == {"quality.metrics.evaluated": 10, "quality.metrics.failed": 0}


@pytest.mark.parametrize(
    ("metrics", "failed"),
    [
        ({"test.accuracy": 1.2}, ["expect_column_values_to_be_between(test.accuracy)"]),
        ({"redacted.fraction": -0.1}, ["expect_column_values_to_be_between(redacted.fraction)"]),
        ({"test.macro_f1": float("nan")}, ["expect_column_values_to_not_be_null(test.macro_f1)"]),
        ({"train.loss": float("inf")}, ["expect_column_values_to_not_be_null(train.loss)"]),
        ({}, ["expect_table_row_count_to_be_between(table)"]),
        ({"a.accuracy": 2.0, "b.loss": 1e9, "c.rate": float("nan"), "d.recall": 0.5},
         ["expect_column_values_to_be_between(a.accuracy)", "expect_column_values_to_not_be_null(c.rate)"]),
    ],
)
def test_bad_metrics_fail(metrics: dict[str, float], failed: list[str]) -> None:
    report = check_metrics(metrics)
    assert report.failed == failed
    with pytest.raises(QualityError, match=rf"quality suite 'metrics' failed {len(failed)} of"):
        report.raise_if_failed()


def test_unit_interval_suffixes_are_configurable() -> None:
    assert check_metrics({"separate": 7.0, "loss": 3.0}).success  # "separate" is not a "rate"
    assert not check_metrics({"loss": 3.0}, unit_interval=("loss",)).success


def test_import_does_not_load_great_expectations() -> None:
    code = "import sys, textsift.quality; assert 'great_expectations' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
