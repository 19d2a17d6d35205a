"""evaluate: utility of classifiers trained on each corpus, the privacy-utility frontier and the report (METHODS.md §5).

Reads the original corpus and each privatized corpus once, one at a time (memory holds the original
and one setting's corpus), and per corpus trains and scores the classifiers
(:mod:`~textsift.evaluation.setting_utility`). Beside them it reads what the ``attack`` stage measured (the attacks
and the leak table) and what ``evaluate_embeddings`` measured (the noisy-embedding rows), and judges: the frontier,
the recommendation, the report and the MLflow runs (:mod:`~textsift.evaluation.publishing`).

Outputs ``metrics/evaluate.json``, ``metrics/frontier.json``, ``reports/evaluate/{utility,frontier}.csv``,
``reports/evaluate/frontier.png`` and ``reports/evaluate/report.html``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from textsift.corpus import split_rows
from textsift.evaluation.publishing import (
    log_embedding_runs,
    log_setting_runs,
    register_classifiers,
    tag_privatizers,
    write_frontier,
)
from textsift.evaluation.setting_utility import (
    CLASSIFIER,
    evaluate_setting,
    transformer,
    utility_metrics,
    with_drops,
    with_majority,
)
from textsift.evaluation.utility import UTILITY_METRICS
from textsift.quality.privatized import check_privatized
from textsift.quality.suites import check_corpus, check_metrics
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


@dataclass
class _Scored:
    """What evaluating each corpus once gives: classifiers, utility rows and the report's examples."""

    models: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    examples: dict[str, list[str]] = field(default_factory=dict)


def _score_corpora(ctx: StageContext, corpus: pd.DataFrame, clf: Any) -> _Scored:
    """Train and score the classifiers of the original corpus and of each privatized one (each read once, one at a
    time)."""
    test = split_rows(corpus, "test")
    show = ctx.params.report.examples_per_setting if ctx.params.report.show_examples else 0
    scored = _Scored()
    scored.models["original"], scored.rows = evaluate_setting("original", split_rows(corpus, "train"),
                                                              {"original": test}, ctx, clf)
    for key in sorted(ctx.params.privatize.settings):
        privatized = ctx.load("privatized", key)  # the one read of this corpus
        check_privatized(corpus, privatized, name=f"evaluate_input_{key}").raise_if_failed()
        private_test = split_rows(privatized, "test")
        scored.models[key], setting_rows = evaluate_setting(
            key, split_rows(privatized, "train"), {"privatized": private_test, "original": test}, ctx, clf)
        scored.rows.extend(setting_rows)
        if show:
            scored.examples[key] = private_test["text"].tolist()[:show]
    return scored


def _utility_table(ctx: StageContext, rows: list[dict[str, Any]], test: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Check, log and write the utility table (with drops and the majority baseline); it and the nested metrics."""
    flat, nested = utility_metrics(rows)
    report = check_metrics(flat, name="evaluate_metrics", unit_interval=UTILITY_METRICS)
    report.raise_if_failed()
    ctx.log_metrics({**flat, **report.to_metrics()})
    utility = with_majority(with_drops(pd.DataFrame(rows)), test["label"])
    for _, row in utility[~utility["beats_majority"]].iterrows():
        log.warning("evaluate: %s on %s (tested on %s) does not beat the majority class (accuracy %.3f <= %.3f)",
                    row["classifier"], row["setting"], row["test_on"], row["accuracy"], row["majority_accuracy"])
    ctx.save("utility_table", utility)
    ctx.tracker.log_artifact(ctx.run_id, ctx.output("utility_table"), "evaluate")
    log.info("evaluate: %d settings; original %s accuracy %.3f", len(ctx.params.privatize.settings),
             CLASSIFIER, flat.get(f"original.{CLASSIFIER}.original.accuracy", float("nan")))
    return utility, nested


def run(ctx: StageContext) -> None:
    """Evaluate the original corpus and every privatized one; judge them with the attacks and the noisy-embedding
    rows; write the utility and frontier tables, ``metrics/evaluate.json``, ``metrics/frontier.json`` and the report;
    log per-setting MLflow runs and register classifiers."""
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="evaluate_input").raise_if_failed()
    scored = _score_corpora(ctx, corpus, transformer(ctx))
    utility, nested = _utility_table(ctx, scored.rows, split_rows(corpus, "test"))
    ctx.save("evaluate_metrics", nested)
    privacy = privatize_metrics(ctx)
    for key, attack in ctx.load("attack_metrics").items():
        privacy.setdefault(key, {}).update(attack)
    embeddings = ctx.load("embedding_table")
    frontier, proposal = write_frontier(ctx, utility, privacy, ctx.load("leaks"), embeddings,
                                        ctx.load("embedding_plot"),
                                        safe_examples(scored.examples, privacy,
                                                      ctx.params.evaluate.recommend.leak_rate))
    setting_runs = log_setting_runs(ctx, frontier, utility, privacy)
    if ctx.params.tracking.log_models:
        judged = tag_privatizers(ctx, frontier, proposal.setting)
        register_classifiers(ctx, scored.models, setting_runs, proposal.setting, judged)
    log_embedding_runs(ctx, embeddings)


def safe_examples(examples: dict[str, list[str]], privacy: dict[str, dict[str, float]], ceiling: float
                  ) -> dict[str, list[str]]:
    """The report's examples of the settings whose leak rate is within ``ceiling``: a setting that leaks more
    would show original personal data in the report (at leak rate 1.0 its examples are the original text)."""
    shown = {key: texts for key, texts in examples.items() if privacy[key].get("privacy.leak.rate", 1.0) <= ceiling}
    for key in sorted(set(examples) - set(shown)):
        log.info("evaluate: no examples of %s in the report: its leak rate is above %g", key, ceiling)
    return shown


def privatize_metrics(ctx: StageContext) -> dict[str, dict[str, float]]:
    """Each setting's ``metrics/privatize/<setting>.json`` (the frontier's leak rate and token change) with its
    ``metrics/outsider/<setting>.json`` (the outsider's gains, the service's leak)."""
    return {key: {**ctx.load("privatize_metrics", key), **ctx.load("outsider_metrics", key)}
            for key in ctx.params.privatize.settings}
