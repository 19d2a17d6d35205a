"""evaluate, utility part: classifiers trained on each corpus, scored with bootstrap intervals (METHODS.md §5).

Rows: the reference ``original`` (trained on the original training split, tested on the original test
split) and, per privacy setting, a classifier trained on the privatized training split and tested on
(a) the privatized and (b) the original test split. Metric keys are
``<setting>.<classifier>.<test_on>.<metric>`` everywhere (DVC metrics, MLflow, the CSV), so settings
line up in comparisons.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.sentence_encoder import load_sentence_encoder
from textsift.device import resolve_device, resolve_precision
from textsift.embeddings.locate import model_folder
from textsift.evaluation.bootstrap import utility_intervals
from textsift.evaluation.feature_classifier import FeatureCache, train_head
from textsift.evaluation.params import TransformerClassifierParams
from textsift.evaluation.transformer_classifier import fine_tune, predict_proba
from textsift.evaluation.utility import UTILITY_METRICS, as_frame, score_probabilities, train_tfidf_logreg
from textsift.rng import generator
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
CLASSIFIER = "tfidf_logreg"
FEATURE_BATCH = 64  # texts per forward pass of the frozen encoder (batched by length: little padding)


@dataclass(frozen=True)
class Transformer:
    """The transformer classifier's encoder folder and, in ``features`` mode, the evaluation's feature cache."""

    encoder: Path
    features: FeatureCache | None


def transformer(ctx: StageContext) -> Transformer | None:
    """The transformer classifier of ``evaluate.transformer`` (None when it is disabled); in ``features`` mode its
    frozen encoder is loaded once for every corpus of the evaluation."""
    options = ctx.params.evaluate.transformer
    if not options.enabled:
        return None
    folder = model_folder(options.encoder, ctx.root, ctx.tracker, "evaluate.transformer.encoder")
    if options.mode == "fine_tune":
        return Transformer(folder, None)
    device = resolve_device(ctx.params.device)
    precision = resolve_precision(ctx.params.evaluate.inference_precision, device)
    return Transformer(folder, FeatureCache(load_sentence_encoder(folder, device), options.max_length, FEATURE_BATCH,
                                            precision))


def head_probabilities(features: FeatureCache, train: pd.DataFrame, tests: dict[str, pd.DataFrame],
                       options: TransformerClassifierParams) -> tuple[list[str], dict[str, np.ndarray]]:
    """``features`` mode: a logistic head on the frozen encoder's features of ``train``; its classes and its
    probabilities on each test set."""
    head = train_head(features.features(list(train["text"])), list(train["label"]), options.head_c,
                      options.head_max_iter)
    return [str(c) for c in head.classes_], {test_on: head.predict_proba(features.features(list(test["text"])))
                                             for test_on, test in tests.items()}


def fine_tuned_probabilities(encoder: Path, train: pd.DataFrame, tests: dict[str, pd.DataFrame],
                             options: TransformerClassifierParams, seed: int, setting: str, device: str,
                             ) -> tuple[list[str], dict[str, np.ndarray]]:
    """``fine_tune`` mode: the encoder's first layers and a head trained on ``train``; classes and probabilities."""
    model = fine_tune(encoder, list(train["text"]), list(train["label"]), options, seed, setting, device)
    return model.classes, {test_on: predict_proba(model, list(test["text"])) for test_on, test in tests.items()}


def _transformer_probabilities(
    setting: str, train: pd.DataFrame, tests: dict[str, pd.DataFrame], ctx: StageContext, clf: Transformer,
) -> tuple[list[str], dict[str, np.ndarray]]:
    """The transformer classifier trained on ``train``: its classes and its probabilities on each test set."""
    params, options = ctx.params, ctx.params.evaluate.transformer
    started = time.perf_counter()
    if clf.features is not None:
        encoded = clf.features.encoded
        out = head_probabilities(clf.features, train, tests, options)
        log.info("evaluate: transformer head on %s (%d docs, %d texts encoded) in %.1fs", setting, len(train),
                 clf.features.encoded - encoded, time.perf_counter() - started)
        return out
    out = fine_tuned_probabilities(clf.encoder, train, tests, options, params.seed, setting,
                                   resolve_device(params.device))
    log.info("evaluate: transformer fine-tuned on %s (%d docs) in %.0fs", setting, len(train),
             time.perf_counter() - started)
    return out


def scored_row(ctx: StageContext, setting: str, classifier: str, test_on: str, classes: list[str],
               proba: np.ndarray, labels: pd.Series) -> dict[str, Any]:
    """One utility row: the metrics and their bootstrap intervals (``<metric>_ci_low``/``_ci_high``)."""
    options = ctx.params.evaluate.bootstrap
    rng = generator(ctx.params.seed, "evaluate.bootstrap", f"{setting}/{classifier}/{test_on}")
    intervals = utility_intervals(classes, proba, list(labels), options.samples, options.level, rng)
    bounds = {f"{metric}_ci_{side}": value for metric, pair in intervals.items()
              for side, value in zip(("low", "high"), pair, strict=True)}
    return {"setting": setting, "classifier": classifier, "test_on": test_on,
            **score_probabilities(classes, proba, labels), **bounds}


def evaluate_setting(
    setting: str, train: pd.DataFrame, tests: dict[str, pd.DataFrame], ctx: StageContext, clf: Transformer | None,
) -> tuple[Any, list[dict[str, Any]]]:
    """Fit each classifier on ``train``; one row per classifier and test set in ``tests``."""
    params = ctx.params
    model = train_tfidf_logreg(train["text"], train["label"], params.evaluate.tfidf_logreg, params.seed)
    rows = [scored_row(ctx, setting, CLASSIFIER, test_on, list(model.classes_),
                       model.predict_proba(as_frame(test["text"])), test["label"]) for test_on, test in tests.items()]
    if clf is not None:
        classes, probabilities = _transformer_probabilities(setting, train, tests, ctx, clf)
        rows.extend(scored_row(ctx, setting, "transformer", test_on, classes, probabilities[test_on], test["label"])
                    for test_on, test in tests.items())
    return model, rows


def utility_metrics(rows: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, Any]]:
    """The rows' metrics flat (``<setting>.<classifier>.<test_on>.<metric>``, NaN left out: MLflow) and
    nested (NaN as null: ``metrics/evaluate.json``)."""
    flat: dict[str, float] = {}
    nested: dict[str, Any] = {}
    for row in rows:
        for metric in UTILITY_METRICS:
            value = row[metric]
            if not math.isnan(value):
                flat[f"{row['setting']}.{row['classifier']}.{row['test_on']}.{metric}"] = value
            nested.setdefault(row["setting"], {}).setdefault(row["classifier"], {}).setdefault(
                row["test_on"], {})[metric] = None if math.isnan(value) else value
    return flat, nested


def with_drops(utility: pd.DataFrame) -> pd.DataFrame:
    """Add ``<metric>_drop``: the reference row's value (same classifier) minus the row's."""
    reference = utility[utility["setting"] == "original"].set_index("classifier")
    out = utility.copy()
    for metric in UTILITY_METRICS:
        out[f"{metric}_drop"] = out["classifier"].map(reference[metric]) - out[metric]
    return out


def with_majority(utility: pd.DataFrame, test_labels: pd.Series) -> pd.DataFrame:
    """Add ``majority_accuracy`` (always predicting the test split's most frequent label) and
    ``beats_majority``: a classifier at or below it has learnt nothing, and its row says so."""
    majority = float(test_labels.value_counts(normalize=True).iloc[0]) if len(test_labels) else float("nan")
    return utility.assign(majority_accuracy=majority, beats_majority=utility["accuracy"] > majority)
