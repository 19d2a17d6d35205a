"""evaluate: utility of each corpus for downstream classifiers — the frontier's rows.

This stage scores the reference row ("original": trained on the original training split,
tested on the original test split); privatized settings add their rows as they land.
Outputs ``metrics/evaluate.json`` (nested ``{setting: {classifier: {metric: value}}}``) and
``reports/evaluate/utility.csv`` (one row per setting x classifier x test set).
"""

from __future__ import annotations

import logging
import math

import pandas as pd

from textsift import quality
from textsift.corpus import atomic_path, read_corpus, write_json
from textsift.evaluation.utility import UTILITY_METRICS, score, train_tfidf_logreg
from textsift.stages import StageContext

log = logging.getLogger("textsift")
CORPUS = "data/ingest/corpus.parquet"
METRICS = "metrics/evaluate.json"
TABLE = "reports/evaluate/utility.csv"


def run(ctx: StageContext) -> None:
    params = ctx.params
    corpus = read_corpus(ctx.path(CORPUS))
    quality.check_corpus(corpus, name="evaluate_input").raise_if_failed()
    train = corpus[corpus["split"] == "train"]
    test = corpus[corpus["split"] == "test"]
    model = train_tfidf_logreg(train["text"], train["label"], params.evaluate.tfidf_logreg, params.seed)
    original = score(model, test["text"], test["label"])
    rows = [{"setting": "original", "classifier": "tfidf_logreg", "test_on": "original", **original}]
    nested = {"original": {"tfidf_logreg": original}}
    flat = {f"original.tfidf_logreg.{k}": v for k, v in original.items() if not math.isnan(v)}
    report = quality.check_metrics(flat, name="evaluate_metrics", unit_interval=UTILITY_METRICS)
    report.raise_if_failed()
    write_json(nested, ctx.path(METRICS))
    with atomic_path(ctx.path(TABLE)) as tmp:
        pd.DataFrame(rows).to_csv(tmp, index=False, float_format="%.6f")
    ctx.tracker.log_artifact(ctx.run_id, ctx.path(TABLE), "evaluate")
    if params.tracking.log_models:
        ctx.tracker.log_sklearn_model(ctx.run_id, model, "tfidf_logreg")
    ctx.log_metrics({**flat, **report.to_metrics()})
    log.info("evaluate: original tfidf_logreg accuracy %.3f", original["accuracy"])
