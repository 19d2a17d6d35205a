"""evaluate_embeddings: utility and attacks per ``embedding_dp`` setting (METHODS.md §3).

Rows: two unnoised references — ``original`` (embeddings of the original text) and ``filled`` (step 1
only: the published basis) — and one row per setting. Utility: the step-3 MLP trained on a view's
training rows and tested on its test rows (a data team holding only that view). Privacy, the strongest attacker
reported (:mod:`textsift.evaluation.keyword_attack`, :mod:`textsift.evaluation.cross_release`):

- keyword inference on the view's test rows by two attackers trained on the training split: on clean embeddings
  (``attack_success_clean_*``, the figure reported before) and on clean embeddings plus Laplace noise of the
  setting's own published scales, drawn with the public seed (``attack_success_noise_*``); ``attack_success_*``
  is the larger of the two, and ``keyword_gain`` = 2 · ``attack_success`` − 1 its criterion;
- the cross-release solver on every pair of published settings against the published basis: ``single_cosine``
  (the set alone), the largest over the setting's pairs of the exact shared-noise solve's, the inverse-variance
  average's and the better one's cosine, the composition baseline and the gain over it (``cross_release_*``),
  and the clean-trained keyword attacker on the nearest estimate (``attack_success_solved``);
- ``privacy_risk``, ``passes`` and ``verdict`` by the embedding criteria of ``evaluate.recommend``
  (:func:`textsift.evaluation.recommend.judge_embeddings`).

Every published set is held in memory at once (rows x dim float32 each) for the pairs. Outputs
``reports/evaluate/embedding_dp.{csv,png}``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.fit import classify
from textsift.budgets.fit_store import load_rows
from textsift.budgets.publish import selection_metric
from textsift.evaluation.cross_release import cross_release, mean_cosine, per_setting
from textsift.evaluation.embedding_columns import (
    ATTACK_COLUMNS,
    CROSS_COLUMNS,
    EMBEDDING_COLUMNS,
    METRIC_COLUMNS,
    REFERENCES,
)
from textsift.evaluation.keyword_attack import (
    GROUPS,
    Attacker,
    Target,
    advantage,
    attack_success,
    strongest,
    train_attackers,
    train_noise_aware_attackers,
)
from textsift.evaluation.keyword_attack import targets as attack_targets
from textsift.evaluation.plots import embedding_dp_png
from textsift.evaluation.recommend import judge_embeddings
from textsift.evaluation.utility import UTILITY_METRICS, score_probabilities
from textsift.quality.embeddings import check_embeddings
from textsift.quality.suites import check_metrics
from textsift.rng import generator
from textsift.stage_context import StageContext

NOISE_STAGE = "evaluate.keyword_attack.noise"  # the noise-aware attacker's draws (public seed)
BASELINE_STAGE = "evaluate.cross_release.baseline"  # the composition baseline's simulated draws (public seed)


def _matrix(frame: pd.DataFrame, column: str) -> np.ndarray:
    return np.stack(frame[column].to_numpy()).astype(np.float32)


def _columns(prefix: str, success: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}_{group}": success[f"success.{group}"] for group in GROUPS}


def _row(ctx: StageContext, name: str, x: np.ndarray, fit: pd.DataFrame, attacked: list[Target],
         clean_attackers: list[Attacker], noise_attackers: list[Attacker] | None) -> dict[str, Any]:
    train, test = (fit["split"] == "train").to_numpy(), (fit["split"] == "test").to_numpy()
    labels = fit["label"].tolist()
    classes, proba = classify(x[train], [labels[i] for i in np.flatnonzero(train)], x[test],
                              ctx.params.embedding_dp.relevance, ctx.params.seed, f"evaluate.{name}")
    scores = score_probabilities(classes, proba, [labels[i] for i in np.flatnonzero(test)])
    clean = attack_success(clean_attackers, attacked, x, test)
    noise = attack_success(noise_attackers, attacked, x, test) if noise_attackers is not None else None
    best = strongest(clean, *([noise] if noise is not None else []))
    return {"setting": name, **scores, **_columns("attack_success", best),
            **_columns("attack_success_clean", clean),
            **(_columns("attack_success_noise", noise) if noise is not None
               else {f"attack_success_noise_{g}": math.nan for g in GROUPS})}


def cross_release_rows(published: dict[str, tuple[np.ndarray, np.ndarray]], basis: np.ndarray, seed: int,
                       attackers: list[Attacker], attacked: list[Target], test: np.ndarray
                       ) -> dict[str, dict[str, float | str]]:
    """Every pair of published sets (``setting -> (embeddings, published scales)``) solved together against the
    published basis; per setting its worst case over its pairs (:func:`textsift.evaluation.cross_release.per_setting`),
    with the clean-trained keyword attacker scored on each pair's nearer estimate."""
    pairs: dict[tuple[str, str], dict[str, float]] = {}
    for a, b in itertools.combinations(sorted(published), 2):
        (ya, sa), (yb, sb) = published[a], published[b]
        result = cross_release(ya, yb, sa, sb, basis, generator(seed, BASELINE_STAGE, f"{a}/{b}"))
        pairs[(a, b)] = {**result.scores(),
                         "attack_success": attack_success(attackers, attacked, result.best, test)["success.all"]}
    return per_setting(pairs)


def evaluate_embeddings(ctx: StageContext) -> tuple[pd.DataFrame, dict[str, float], bytes]:
    """The table (references first), flat metrics ``embedding.<row>.<metric>`` and the plot (PNG)."""
    settings = ctx.params.embedding_dp.settings
    seed = ctx.params.seed
    fit = load_rows(ctx.input("budgets"))
    clean, basis = _matrix(fit, "clean"), _matrix(fit, "embedding")
    train, test = (fit["split"] == "train").to_numpy(), (fit["split"] == "test").to_numpy()
    options = ctx.params.embedding_dp
    words = fit["sensitive_words"]
    attacked = attack_targets([set(doc) for doc in fit["sensitive_labels"]], [set(doc) for doc in words], train,
                              options.replace_labels, options.attacker.min_positives, options.attacker.max_words)
    clean_attackers = train_attackers(clean, train, attacked, seed)
    rows = [{**_row(ctx, "original", clean, fit, attacked, clean_attackers, None), "allocation": "none"},
            {**_row(ctx, "filled", basis, fit, attacked, clean_attackers, None), "allocation": "none",
             "single_cosine": 1.0}]
    published: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for key in sorted(settings):
        frame = ctx.load("noisy_embeddings", key)
        check_embeddings(fit, frame, basis.shape[1], name=f"evaluate_embeddings_input_{key}").raise_if_failed()
        described = ctx.load("embedding_manifest", key)
        x, scale = _matrix(frame, "embedding"), np.asarray(described["laplace_scale"], dtype=np.float64)
        noise_attackers = train_noise_aware_attackers(clean, train, attacked, scale, generator(seed, NOISE_STAGE, key),
                                                      seed)
        rows.append({**_row(ctx, key, x, fit, attacked, clean_attackers, noise_attackers),
                     **{k: described[k] for k in ("allocation", "epsilon_max", "a", "b", "gamma")},
                     "single_cosine": mean_cosine(x, basis)})
        published[key] = (x, scale)
    solved = cross_release_rows(published, basis, seed, clean_attackers, attacked, test)
    rows = [{**row, **solved.get(row["setting"], {})} for row in rows]
    metric = selection_metric(fit["label"][train].tolist())
    table = pd.DataFrame(rows)
    for column in (*ATTACK_COLUMNS, *CROSS_COLUMNS):
        if column not in table:
            table[column] = math.nan  # e.g. one setting only: no pair to solve
    table["utility"] = table[metric]
    table["attack_success"] = table["attack_success_all"]  # the strongest attacker: max(clean, noise-aware)
    table["attack_success_clean"] = table["attack_success_clean_all"]  # the clean-trained figure reported before
    table["keyword_gain"] = [advantage(float(v)) for v in table["attack_success"]]
    table["attack_targets"] = len(attacked)
    table = table.merge(judge_embeddings(table, ctx.params.evaluate.recommend), on="setting", how="left")
    flat = {f"embedding.{row['setting']}.{column}": float(row[column]) for _, row in table.iterrows()
            for column in METRIC_COLUMNS if column in row and not _nan(row[column])}
    check_metrics(flat, name="evaluate_embeddings_metrics",
                          unit_interval=(*UTILITY_METRICS, "accuracy", "f1", "auc", "all", "kept", "filled", "gain",
                                         "solved", "privacy_risk")).raise_if_failed()
    png = embedding_dp_png(table[~table["setting"].isin(REFERENCES)], table[table["setting"].isin(REFERENCES)],
                           metric)
    return table, flat, png


def set_metrics(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per row of the table (references and settings), its ε_max and metrics: ``metrics/evaluate_embeddings.json``."""
    return {row["setting"]: {k: float(row[k]) for k in EMBEDDING_COLUMNS if not _nan(row[k])}
            for _, row in table.iterrows()}


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
