"""The privatized-corpus suite: same rows, ids, labels and splits; no empty document."""

from __future__ import annotations

import pandas as pd
import pytest

from textsift.errors import QualityError
from textsift.quality.privatized import check_privatized


@pytest.fixture
def original() -> pd.DataFrame:
    return pd.DataFrame({
        "doc_id": ["a", "b", "c", "d"], "text": ["one Ann", "two", "three", "four"],
        "label": ["pos", "neg", "pos", "neg"], "split": ["train", "train", "test", "test"],
        "spans": [[], [], [], []],
    })


def test_only_changed_text_passes(original: pd.DataFrame) -> None:
    output = original.assign(text=["uno [MASK]", "dos", "tres", "cuatro"])
    assert check_privatized(original, output).success


def test_dropped_row_fails_naming_the_row_count(original: pd.DataFrame) -> None:
    report = check_privatized(original, original.iloc[[0, 1, 3]])
    assert "expect_table_row_count_to_equal(table)" in report.failed
    with pytest.raises(QualityError, match="row_count"):
        report.raise_if_failed()


def test_changed_label_fails_naming_the_column(original: pd.DataFrame) -> None:
    report = check_privatized(original, original.assign(label=["pos", "pos", "pos", "neg"]))
    assert report.failed == ["expect_column_values_to_be_between(same_label)"]
    assert report.details[report.failed[0]] == "unexpected_count=1"


def test_reordered_rows_and_empty_text_fail(original: pd.DataFrame) -> None:
    report = check_privatized(original, original.iloc[[1, 0, 2, 3]].assign(text=["x", "y", " ", "z"]))
    assert {"expect_column_values_to_be_between(same_id)", "expect_column_values_to_be_between(text_len)"} <= set(
        report.failed)
    with pytest.raises(QualityError) as excinfo:
        report.raise_if_failed()
    assert "Ann" not in str(excinfo.value)
