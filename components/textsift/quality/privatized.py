"""The suite every privatized corpus must pass: it is its input with only the text changed.

Expects the same number of rows, and row by row the same id, label (L* = L) and split, and
no empty document. Validated on a derived, text-free frame, like every suite here.
"""

from __future__ import annotations

import pandas as pd

from textsift.quality.runner import Expectation, QualityReport, run_suite
from textsift.quality.suites import text_len

ROW_FLAGS = ("same_id", "same_label", "same_split")


def row_flags(original: pd.DataFrame, output: pd.DataFrame) -> pd.DataFrame:
    """Per output row: its id, and 1.0/0.0 whether its id, label and split equal the input row's.

    Shared by every suite of a stage output that must keep its input's rows (privatized text, embeddings).
    """
    base = original.reset_index(drop=True).reindex(range(len(output)))
    out = output.reset_index(drop=True)
    return pd.DataFrame({"doc_id": out["doc_id"].to_numpy(),
                         **{flag: (out[column] == base[column]).astype("float64")
                            for flag, column in zip(ROW_FLAGS, ("doc_id", "label", "split"), strict=True)}})


def row_expectations(n_rows: int) -> list[Expectation]:
    """The output has the input's row count, unique ids, and every row flag at 1."""
    return [("expect_table_row_count_to_equal", {"value": n_rows}),
            ("expect_column_values_to_be_unique", {"column": "doc_id"}),
            *(("expect_column_values_to_be_between", {"column": flag, "min_value": 1, "max_value": 1})
              for flag in ROW_FLAGS)]


def privatized_frame(original: pd.DataFrame, output: pd.DataFrame) -> pd.DataFrame:
    """Per output row: whether its id, label and split equal the input row's, and its text length."""
    texts = output["text"].tolist()
    return row_flags(original, output).assign(
        text_len=pd.Series([text_len(t) for t in texts], dtype="float64"))


def check_privatized(original: pd.DataFrame, output: pd.DataFrame, *, name: str = "privatized") -> QualityReport:
    """Validate that ``output`` keeps the row count, ids, labels and splits of ``original``."""
    expectations: list[Expectation] = [
        *row_expectations(len(original)),
        ("expect_column_values_to_not_be_null", {"column": "text_len"}),
        ("expect_column_values_to_be_between", {"column": "text_len", "min_value": 1}),
    ]
    return run_suite(name, privatized_frame(original, output), expectations)
