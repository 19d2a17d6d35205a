"""Privatizing a corpus frame with one setting, and the privacy figures every mechanism is judged by.

Shared by the ``privatize`` stage (the whole corpus) and ``textsift privatize`` (:mod:`textsift.adhoc`: a file, a
chunk at a time), so both hand a mechanism the same :class:`~textsift.mechanisms.base.Documents`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from textsift.config import Setting
from textsift.corpus import spans_to_python
from textsift.evaluation.privacy import leak_rates, token_change_fraction
from textsift.mechanisms.base import Documents, Resources
from textsift.mechanisms.registry import mechanism
from textsift.rng import Key


def documents(corpus: pd.DataFrame) -> Documents:
    """The corpus frame's texts, ids and gold spans, as every mechanism takes them."""
    return Documents(corpus["text"].tolist(), corpus["doc_id"].astype(str).tolist(),
                     [spans_to_python(cell) for cell in corpus["spans"]])


def privatize_corpus(corpus: pd.DataFrame, setting: Setting, resources: Resources, key: Key
                     ) -> tuple[list[str], dict[str, float]]:
    """One setting's mechanism over a corpus frame (a chunk of ``textsift privatize``), with loaded resources."""
    result = mechanism(setting.kind).privatize(documents(corpus), setting, resources, key)
    return result.texts, result.metrics


def privacy_metrics(original: pd.DataFrame, texts: list[str]) -> dict[str, float]:
    """Token change fraction over all documents; leak rates over the test split's spans."""
    changed = [token_change_fraction(a, b) for a, b in zip(original["text"], texts, strict=True)]
    metrics = {"privacy.token_change_fraction": float(np.mean(changed)) if changed else 0.0}
    test = (original["split"] == "test").to_numpy()
    leaks = leak_rates(
        list(original["text"][test]),
        [spans_to_python(s) for s in original["spans"][test]],
        [t for t, is_test in zip(texts, test, strict=True) if is_test],
    )
    metrics.update({f"privacy.{k}": v for k, v in leaks.items()})
    return metrics
