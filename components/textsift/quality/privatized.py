"""The suite every privatized corpus must pass: it is its input with only the text changed.

Expects the same number of rows, and row by row the same id, label (L* = L) and split, and
no empty document. Validated on a derived, text-free frame, like every suite here.
"""

from __future__ import annotations

import pandas as pd

from textsift.quality.runner import Expectation, QualityReport, run_suite
from textsift.quality.suites import text_len


def privatized_frame(original: pd.DataFrame, output: pd.DataFrame) -> pd.DataFrame:
    """Per output row: whether its id, label and split equal the input row's, and its text length."""
    n = len(output)
    base = original.reset_index(drop=True).reindex(range(n))
    out = output.reset_index(drop=True)
    return pd.DataFrame(
        {
            "doc_id": out["doc_id"].to_numpy(),
            "same_id": (out["doc_id"] == base["doc_id"]).astype("float64"),
            "same_label": (out["label"] == base["label"]).astype("float64"),
            "same_split": (out["split"] == base["split"]).astype("float64"),
            "text_len": pd.Series([text_len(t) for t in out["text"].tolist()], dtype="float64"),
        }
    )


def check_privatized(original: pd.DataFrame, output: pd.DataFrame, *, name: str = "privatized") -> QualityReport:
    """Validate that ``output`` keeps the row count, ids, labels and splits of ``original``."""
    expectations: list[Expectation] = [
        ("expect_table_row_count_to_equal", {"value": len(original)}),
        ("expect_column_values_to_be_unique", {"column": "doc_id"}),
        ("expect_column_values_to_not_be_null", {"column": "text_len"}),
        ("expect_column_values_to_be_between", {"column": "text_len", "min_value": 1}),
    ]
    for column in ("same_id", "same_label", "same_split"):
        expectations.append(("expect_column_values_to_be_between", {"column": column, "min_value": 1, "max_value": 1}))
    return run_suite(name, privatized_frame(original, output), expectations)
