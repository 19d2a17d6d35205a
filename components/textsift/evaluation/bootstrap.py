"""Percentile-bootstrap confidence intervals for utility and leak metrics (METHODS.md §5).

The test split is one sample of documents; a utility of 0.80 on 400 test documents is
0.80 ± 0.04. Each interval resamples the test documents with replacement (``samples`` times,
from a generator keyed by the caller) and recomputes the metric on every resample at once:
vectorized over the (samples, n) index matrix, no Python loop over resamples. Leak rates
resample documents, not spans, because the spans of one document are not independent.

Pure functions: arrays in, ``(low, high)`` out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import rankdata

Interval = tuple[float, float]
NAN_INTERVAL: Interval = (float("nan"), float("nan"))


_BLOCK_CELLS = 4_000_000  # resampled indices held at once (32 MB): big test splits go in blocks of resamples


def bootstrap(n: int, samples: int, rng: np.random.Generator, statistic: Callable[[np.ndarray], np.ndarray],
              ) -> np.ndarray:
    """``statistic`` of ``samples`` resamples of n units: it gets (block, n) indices, returns (block, ...) values."""
    block = max(1, _BLOCK_CELLS // max(n, 1))
    values = [statistic(rng.integers(0, n, size=(min(block, samples - start), n)))
              for start in range(0, samples, block)]
    return np.concatenate(values) if values else np.zeros(0)


def percentile_interval(values: np.ndarray, level: float) -> Interval:
    """The central ``level`` interval of the bootstrap distribution (NaN resamples ignored)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return NAN_INTERVAL
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def _accuracy(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    return (truth == predicted).mean(axis=1)


def _macro_f1(truth: np.ndarray, predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """Macro-F1 per resample, as scikit-learn: classes present in truth or prediction, F1 = 0 when undefined."""
    scores, present = [], []
    for c in range(n_classes):
        is_true, is_pred = truth == c, predicted == c
        tp = (is_true & is_pred).sum(axis=1)
        denominator = is_true.sum(axis=1) + is_pred.sum(axis=1)
        scores.append(np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0))
        present.append(denominator > 0)
    scores_, present_ = np.array(scores), np.array(present)
    return (scores_ * present_).sum(axis=0) / np.maximum(present_.sum(axis=0), 1)


def _roc_auc(positive: np.ndarray, score: np.ndarray) -> np.ndarray:
    """ROC AUC per resample (Mann-Whitney U with tied ranks averaged); NaN where one class is missing."""
    ranks = rankdata(score, axis=1)
    n_pos = positive.sum(axis=1)
    n_neg = positive.shape[1] - n_pos
    u = (ranks * positive).sum(axis=1) - n_pos * (n_pos + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), u / (n_pos * n_neg), np.nan)


def utility_intervals(
    classes: Sequence[str], proba: np.ndarray, labels: Sequence[str], samples: int, level: float,
    rng: np.random.Generator,
) -> dict[str, Interval]:
    """Intervals of accuracy, macro-F1 and (binary tasks) ROC AUC, the metrics of ``score_probabilities``.

    Args:
        classes: the label of each probability column.
        proba: (n_docs, n_classes) probabilities on the test documents.
        labels: their true labels.
        samples: bootstrap resamples.
        level: coverage, e.g. 0.95.
        rng: the resampling generator (keyed by the caller).
    """
    proba = np.asarray(proba)
    if len(labels) == 0:
        return {"accuracy": NAN_INTERVAL, "macro_f1": NAN_INTERVAL, "roc_auc": NAN_INTERVAL}
    index = {label: i for i, label in enumerate(classes)}
    truth_all = np.array([index.get(label, -1) for label in labels])
    predicted_all = proba.argmax(axis=1)
    binary = len(classes) == 2 and len(set(labels)) == 2

    def statistics(rows: np.ndarray) -> np.ndarray:
        truth, predicted = truth_all[rows], predicted_all[rows]
        auc = _roc_auc(truth == 1, proba[:, 1][rows]) if binary else np.full(len(rows), np.nan)
        return np.stack([_accuracy(truth, predicted), _macro_f1(truth, predicted, len(classes)), auc], axis=1)

    values = bootstrap(len(truth_all), samples, rng, statistics)
    return {"accuracy": percentile_interval(values[:, 0], level),
            "macro_f1": percentile_interval(values[:, 1], level),
            "roc_auc": percentile_interval(values[:, 2], level) if binary else NAN_INTERVAL}


def ratio_interval(numerators: np.ndarray, denominators: np.ndarray, samples: int, level: float,
                   rng: np.random.Generator) -> Interval:
    """Interval of sum(numerators) / sum(denominators) over resampled units (documents).

    For a leak rate: per document, its leaked spans and its spans. Resamples with no span are NaN
    (ignored by the percentile).
    """
    numerators, denominators = np.asarray(numerators, float), np.asarray(denominators, float)
    if numerators.size == 0 or denominators.sum() == 0:
        return NAN_INTERVAL

    def rate(rows: np.ndarray) -> np.ndarray:
        total = denominators[rows].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, numerators[rows].sum(axis=1) / total, np.nan)

    return percentile_interval(bootstrap(numerators.size, samples, rng, rate), level)
