"""evaluate, noisy-embedding part: utility and keyword inference per ``embedding_dp`` setting (METHODS.md §3).

Rows: two unnoised references — ``original`` (embeddings of the original text) and ``filled`` (step 1
only: the published basis) — and one row per setting. Utility: the step-3 MLP trained on a view's
training rows and tested on its test rows (a data team holding only that view). Privacy: the keyword
attacker trained on clean embeddings of the training split, tested on the view's test rows
(:mod:`textsift.evaluation.keyword_attack`). Outputs ``reports/evaluate/embedding_dp.{csv,png}``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from textsift import quality
from textsift.budgets.fit import classify
from textsift.budgets.publish import selection_metric
from textsift.corpus import atomic_path
from textsift.evaluation.keyword_attack import attack_success, train_attackers
from textsift.evaluation.keyword_attack import targets as attack_targets
from textsift.evaluation.plots import embedding_dp_png
from textsift.evaluation.utility import UTILITY_METRICS, score_probabilities
from textsift.stages import StageContext
from textsift.stages.lrp_budgets import EMBEDDINGS, WORD_SEP

REFERENCES = ("original", "filled")


def _matrix(frame: pd.DataFrame, column: str) -> np.ndarray:
    return np.stack(frame[column].to_numpy()).astype(np.float32)


def _row(ctx: StageContext, name: str, x: np.ndarray, fit: pd.DataFrame, attack: Any) -> dict[str, Any]:
    train, test = (fit["split"] == "train").to_numpy(), (fit["split"] == "test").to_numpy()
    labels = fit["label"].tolist()
    classes, proba = classify(x[train], [labels[i] for i in np.flatnonzero(train)], x[test],
                              ctx.params.embedding_dp.relevance, ctx.params.seed, f"evaluate.{name}")
    scores = score_probabilities(classes, proba, [labels[i] for i in np.flatnonzero(test)])
    attackers, attacked = attack
    success = attack_success(attackers, attacked, x, test)
    return {"setting": name, **scores,
            **{f"attack_{k.replace('.', '_')}": v for k, v in success.items() if k.startswith("success.")}}


def evaluate_embeddings(ctx: StageContext) -> tuple[pd.DataFrame, dict[str, float], bytes]:
    """The table (references first), flat metrics ``embedding.<row>.<metric>`` and the plot, all written."""
    settings = ctx.params.embedding_dp.settings
    fit = pq.read_table(ctx.input("budgets") / EMBEDDINGS).to_pandas()
    clean, basis = _matrix(fit, "clean"), _matrix(fit, "embedding")
    train = (fit["split"] == "train").to_numpy()
    options = ctx.params.embedding_dp
    words = [[tuple(w.split(WORD_SEP, 1)) for w in doc] for doc in fit["sensitive_words"]]
    attacked = attack_targets([set(doc) for doc in fit["sensitive_labels"]], [set(doc) for doc in words], train,
                              options.replace_labels, options.attacker.min_positives, options.attacker.max_words)
    attack = (train_attackers(clean, train, attacked, ctx.params.seed), attacked)
    rows = [{**_row(ctx, "original", clean, fit, attack), "allocation": "none"},
            {**_row(ctx, "filled", basis, fit, attack), "allocation": "none"}]
    for key in sorted(settings):
        published = pq.read_table(ctx.input("noisy_embeddings", key)).to_pandas()
        quality.check_embeddings(fit, published, basis.shape[1], name=f"evaluate_input_{key}").raise_if_failed()
        described = json.loads(ctx.input("embedding_manifest", key).read_text(encoding="utf-8"))
        rows.append({**_row(ctx, key, _matrix(published, "embedding"), fit, attack),
                     **{k: described[k] for k in ("allocation", "epsilon_max", "a", "b", "gamma")}})
    metric = selection_metric(fit["label"][train].tolist())
    table = pd.DataFrame(rows)
    table["utility"] = table[metric]
    table["attack_success"] = table["attack_success_all"]
    table["attack_targets"] = len(attacked)
    flat = {f"embedding.{row['setting']}.{column}": float(row[column]) for row in rows
            for column in (*UTILITY_METRICS, "attack_success_all", "attack_success_kept", "attack_success_filled")
            if column in row and not _nan(row[column])}
    quality.check_metrics(flat, name="evaluate_embedding_metrics",
                          unit_interval=(*UTILITY_METRICS, "accuracy", "f1", "auc", "all", "kept", "filled")
                          ).raise_if_failed()
    png = embedding_dp_png(table[~table["setting"].isin(REFERENCES)], table[table["setting"].isin(REFERENCES)],
                           metric)
    with atomic_path(ctx.output("embedding_table")) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6f")
    with atomic_path(ctx.output("embedding_plot")) as tmp:
        tmp.write_bytes(png)
    return table, flat, png


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
