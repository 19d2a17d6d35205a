"""Expectation suites for the canonical corpus and for evaluation metrics.

No suite ever sees document text. GX quotes the values an expectation rejects, and those
results would reach logs; so ``check_corpus`` validates a derived frame of ids, labels,
splits, text lengths and counts of out-of-bounds spans, and ``check_metrics`` validates
numbers only. The expectation lists are plain ``(type, kwargs)`` pairs, so this module
never imports Great Expectations (see ``runner``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from textsift.corpus import REQUIRED_COLUMNS, SPLITS
from textsift.errors import QualityError
from textsift.quality.runner import Expectation, QualityReport, run_suite

UNIT_INTERVAL_SUFFIXES = ("accuracy", "f1", "precision", "recall", "auc", "fraction", "rate")


def text_len(text: Any) -> int | None:
    """Characters of ``text`` after stripping whitespace; None when the text is missing."""
    return len(text.strip()) if isinstance(text, str) else None


def _bad_spans(text: Any, spans: Any) -> int:
    """How many spans break ``0 <= start < end <= len(text)`` (a malformed span counts as bad)."""
    if not pd.api.types.is_list_like(spans):
        return 0
    limit = len(text) if isinstance(text, str) else 0
    bad = 0
    for span in spans:
        try:
            bad += not 0 <= int(span["start"]) < int(span["end"]) <= limit
        except (KeyError, TypeError, ValueError):
            bad += 1
    return bad


def corpus_frame(frame: pd.DataFrame, split_fractions: Mapping[str, float]) -> pd.DataFrame:
    """The text-free frame the corpus suite validates.

    Columns: ``doc_id, label, split`` as given; ``text_len`` (stripped length, null for
    missing text); ``bad_spans`` (out-of-bounds spans per document); and ``is_<split>``
    (1.0 or 0.0) for each split named in ``split_fractions``, whose mean is that split's share.
    """
    texts = frame["text"].tolist()
    derived = pd.DataFrame(
        {
            "doc_id": frame["doc_id"].to_numpy(),
            "label": frame["label"].to_numpy(),
            "split": frame["split"].to_numpy(),
            "text_len": pd.Series([text_len(t) for t in texts], dtype="float64"),
            "bad_spans": [_bad_spans(t, s) for t, s in zip(texts, frame["spans"].tolist(), strict=True)],
        }
    )
    for split in split_fractions:
        derived[f"is_{split}"] = (derived["split"] == split).astype("float64")
    return derived


def corpus_expectations(
    labels: set[str] | None,
    split_fractions: Mapping[str, float],
    tolerance: float,
    require_splits: tuple[str, ...],
) -> list[Expectation]:
    """The corpus suite over ``corpus_frame`` columns (see ``check_corpus``)."""
    expectations: list[Expectation] = [
        ("expect_table_row_count_to_be_between", {"min_value": 1}),
        ("expect_column_values_to_not_be_null", {"column": "doc_id"}),
        ("expect_column_values_to_be_unique", {"column": "doc_id"}),
        ("expect_column_values_to_not_be_null", {"column": "text_len"}),
        ("expect_column_values_to_be_between", {"column": "text_len", "min_value": 1}),
        ("expect_column_values_to_not_be_null", {"column": "label"}),
        ("expect_column_values_to_not_be_null", {"column": "split"}),
        ("expect_column_values_to_be_in_set", {"column": "split", "value_set": list(SPLITS)}),
        ("expect_column_values_to_be_between", {"column": "bad_spans", "min_value": 0, "max_value": 0}),
    ]
    if labels is not None:
        in_labels = {"column": "label", "value_set": sorted(labels)}
        expectations.append(("expect_column_values_to_be_in_set", in_labels))
    if require_splits:
        has_splits = {"column": "split", "value_set": list(require_splits)}
        expectations.append(("expect_column_distinct_values_to_contain_set", has_splits))
    for split, share in split_fractions.items():
        bounds = {"min_value": share - tolerance, "max_value": share + tolerance}
        expectations.append(("expect_column_mean_to_be_between", {"column": f"is_{split}", **bounds}))
    return expectations


def check_corpus(
    frame: pd.DataFrame,
    *,
    labels: set[str] | None = None,
    split_fractions: dict[str, float] | None = None,
    tolerance: float = 0.05,
    require_splits: tuple[str, ...] = ("train", "test"),
    name: str = "corpus",
) -> QualityReport:
    """Validate a canonical corpus frame (``doc_id, text, label, split, spans``).

    Expects: at least one row; doc_id non-null and unique; text non-null and not blank;
    label non-null (and in ``labels`` when given); split non-null and one of SPLITS; every
    split of ``require_splits`` present; each split's share within ``tolerance`` of
    ``split_fractions`` when given; every span inside its text (``0 <= start < end <= len``).

    Args:
        frame: The corpus; only a text-free derivation of it is handed to GX.
        labels: The allowed labels, or None to accept any non-null label.
        split_fractions: Expected share of each split, e.g. ``{"train": 0.7, "test": 0.2}``.
        tolerance: Allowed absolute deviation of each share.
        require_splits: Splits that must hold at least one document.
        name: Suite name for the report and its metrics.

    Returns:
        The report; call ``raise_if_failed`` to stop a stage on failure.

    Raises:
        QualityError: When ``frame`` lacks canonical columns.
    """
    missing = [column for column in REQUIRED_COLUMNS if column not in frame.columns]
    if missing:
        raise QualityError(f"quality suite '{name}': corpus frame lacks columns {missing}")
    fractions = split_fractions or {}
    expectations = corpus_expectations(labels, fractions, tolerance, require_splits)
    return run_suite(name, corpus_frame(frame, fractions), expectations)


def is_unit_interval(key: str, suffixes: tuple[str, ...]) -> bool:
    """True when ``key`` ends with a suffix after a ``. _ / -`` boundary (``test.macro_f1`` ~ ``f1``)."""
    return any(re.search(rf"(?:^|[._/-]){re.escape(suffix)}$", key) for suffix in suffixes)


def _finite_or_none(value: Any) -> float | None:
    """``value`` as a float, or None when it is NaN, infinite or not a number (GX sees it as null)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def check_metrics(
    metrics: Mapping[str, float],
    *,
    name: str = "metrics",
    unit_interval: tuple[str, ...] = UNIT_INTERVAL_SUFFIXES,
) -> QualityReport:
    """Validate evaluation metrics: all finite; unit-interval ones within [0, 1].

    The derived frame has one row per metric (``metric``, ``value`` with non-finite values as null, ``unit``:
    whether it must lie in [0, 1]) and three expectations, whatever the number of metrics: at least one row, no
    null value, unit-interval values between 0 and 1 (GX's pandas ``row_condition``). One expectation per
    metric cost ~20 ms each, seconds for a stage with hundreds of metrics, in every stage process. A failure names
    each offending metric: ``expect_column_values_to_not_be_null(k)`` means "k is NaN, infinite or not a number",
    ``..._to_be_between(k)`` "k is outside [0, 1]"; its detail is GX's count over all metrics.

    Args:
        metrics: Metric key to value.
        name: Suite name for the report and its metrics.
        unit_interval: Key suffixes of metrics that must lie in [0, 1].

    Returns:
        The report; it fails on an empty ``metrics`` too.
    """
    keys = list(metrics)
    frame = pd.DataFrame({"metric": pd.Series(keys, dtype="object"),
                          "value": pd.Series([_finite_or_none(metrics[k]) for k in keys], dtype="float64"),
                          "unit": pd.Series([is_unit_interval(k, unit_interval) for k in keys], dtype="bool")})
    expectations: list[Expectation] = [
        ("expect_table_row_count_to_be_between", {"min_value": 1}),
        ("expect_column_values_to_not_be_null", {"column": "value"}),
        ("expect_column_values_to_be_between", {"column": "value", "min_value": 0, "max_value": 1,
                                                "row_condition": "unit==True", "condition_parser": "pandas"}),
    ]
    return _named_failures(run_suite(name, frame, expectations), frame)


def _named_failures(report: QualityReport, frame: pd.DataFrame) -> QualityReport:
    """``report`` with each failing metric-column expectation expanded into the metrics that fail it (the same rule
    GX applied, on the same frame; metric keys are names, never data values), and ``evaluated`` counting the
    checks made: the table, every value, every unit-interval value."""
    offenders = {"expect_column_values_to_not_be_null(value)": ("expect_column_values_to_not_be_null",
                                                                  frame["value"].isna()),
                 "expect_column_values_to_be_between(value)": ("expect_column_values_to_be_between",
                                                               frame["unit"] & ~frame["value"].between(0, 1)
                                                               & frame["value"].notna())}
    failed, details = [], {}
    for description in report.failed:
        kind, rows = offenders.get(description, (None, None))
        named = [f"{kind}({key})" for key in frame.loc[rows, "metric"]] if kind is not None else []
        for entry in named or [description]:
            failed.append(entry)
            details[entry] = report.details.get(description, "failed")
    checks = 1 + len(frame) + int(frame["unit"].sum())  # the table, every value, every unit-interval value
    return replace(report, evaluated=checks, failed=sorted(failed), details=dict(sorted(details.items())))
