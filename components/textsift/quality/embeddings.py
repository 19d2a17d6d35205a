"""The suite every published embedding set must pass: one finite vector per input row, ids, labels, splits kept.

Validated on a derived frame (id, same id/label/split flags, vector width, finiteness, norm): the vectors
themselves never reach Great Expectations or its messages.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from textsift.quality.privatized import row_expectations, row_flags
from textsift.quality.runner import Expectation, QualityReport, run_suite


def embeddings_frame(original: pd.DataFrame, output: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per output row: same id/label/split as the input row, the vector's width, finiteness and norm."""
    vectors = [np.asarray(v, dtype=np.float64) for v in output[column].tolist()]
    return row_flags(original, output).assign(
        width=pd.Series([float(v.size) for v in vectors], dtype="float64"),
        finite=pd.Series([float(np.isfinite(v).all()) for v in vectors], dtype="float64"),
        norm=pd.Series([float(np.linalg.norm(v)) if np.isfinite(v).all() else None for v in vectors],
                       dtype="float64"),
    )


def check_embeddings(original: pd.DataFrame, output: pd.DataFrame, dim: int, *, column: str = "embedding",
                     name: str = "embeddings") -> QualityReport:
    """Validate ``output[column]``: the rows of ``original`` in order, each a finite ``dim``-vector, norm > 0."""
    expectations: list[Expectation] = [
        *row_expectations(len(original)),
        ("expect_column_values_to_be_between", {"column": "width", "min_value": dim, "max_value": dim}),
        ("expect_column_values_to_be_between", {"column": "finite", "min_value": 1, "max_value": 1}),
        ("expect_column_values_to_not_be_null", {"column": "norm"}),
        ("expect_column_values_to_be_between", {"column": "norm", "min_value": 0, "strict_min": True}),
    ]
    return run_suite(name, embeddings_frame(original, output, column), expectations)
