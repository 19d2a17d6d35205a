"""evaluate: utility of each corpus for downstream classifiers — the frontier's rows.

Rows (METHODS.md §5): the reference row ``original`` (trained on the original training
split, tested on the original test split) and, per privacy setting, a classifier trained on
the privatized training split and tested on (a) the privatized and (b) the original test
split. Metric keys are ``<setting>.<classifier>.<test_on>.<metric>`` everywhere (DVC metrics,
MLflow, the CSV), so settings line up in comparisons.

Then the frontier: utility drop vs leak rate per setting, Pareto flags, the ranking at
``evaluate.frontier.leak_ceiling``, a plot and a self-contained HTML report — logged to the
pipeline's parent MLflow run — and one ``frontier@<setting>`` MLflow run per setting whose
metric names are the same for every mechanism, so the MLflow UI's compare view lines them up.

Noisy sentence embeddings (``embedding_dp`` settings) get their own rows: utility of the MLP trained on
each published set and keyword-attack success (:mod:`textsift.stages.evaluate_embeddings`).

Outputs ``metrics/evaluate.json``, ``metrics/evaluate_embeddings.json``, ``reports/evaluate/{utility,
frontier,embedding_dp}.csv``, ``reports/evaluate/{frontier,embedding_dp}.png`` and ``reports/evaluate/report.html``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import tempfile
import time
from datetime import UTC, datetime
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from textsift import quality
from textsift.budgets.publish import ACCOUNTING
from textsift.config import InterestAttackParams, flatten
from textsift.corpus import atomic_path, read_corpus, spans_to_python, write_json
from textsift.device import resolve_device
from textsift.embeddings.locate import model_folder
from textsift.evaluation.bootstrap import utility_intervals
from textsift.evaluation.detection_quality import CAVEAT as DETECTION_CAVEAT
from textsift.evaluation.detection_quality import detection_table, protected_types_table
from textsift.evaluation.frontier import INTERVAL_COLUMNS, frontier_rows, frontier_table, recommend
from textsift.evaluation.leaks import ALL, leak_table
from textsift.evaluation.plots import frontier_png
from textsift.evaluation.privacy import attacker_recall, leak_counts
from textsift.evaluation.report import render_report
from textsift.evaluation.transformer_classifier import fine_tune, predict_proba
from textsift.evaluation.utility import TEXT_COLUMN, UTILITY_METRICS, as_frame, score_probabilities, train_tfidf_logreg
from textsift.interests.attack import interest_accuracy, interest_leak
from textsift.interests.io import load_interest_model
from textsift.interests.training import INTEREST_ONLY_TOKENS, InterestModel, generate, infer, parse
from textsift.models.detector import detect
from textsift.models.detector_io import load_detector
from textsift.rng import generator
from textsift.stage_cache import content_digest
from textsift.stages import StageContext
from textsift.stages.evaluate_embeddings import evaluate_embeddings
from textsift.tracking import git_commit

log = logging.getLogger("textsift")
CLASSIFIER = "tfidf_logreg"
EMBEDDING_COLUMNS = ("epsilon_max", *UTILITY_METRICS, "attack_success_all", "attack_success_kept",
                     "attack_success_filled")
EMBEDDING_NOTE = (f"Noisy embeddings: {ACCOUNTING} Keyword attack: balanced accuracy of classifiers trained on "
                  "clean embeddings (0.5 = chance).")


def _split(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    return frame[frame["split"] == name]


def encoder_folder(ctx: StageContext) -> Path | None:
    """The transformer classifier's encoder folder (``evaluate.transformer.encoder``), when it is enabled."""
    options = ctx.params.evaluate.transformer
    if not options.enabled:
        return None
    return model_folder(options.encoder, ctx.root, ctx.tracker, "evaluate.transformer.encoder")


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
    setting: str, train: pd.DataFrame, tests: dict[str, pd.DataFrame], ctx: StageContext, encoder: Path | None,
) -> tuple[Any, list[dict[str, Any]]]:
    """Fit each classifier on ``train``; one row per classifier and test set in ``tests``."""
    params = ctx.params
    model = train_tfidf_logreg(train["text"], train["label"], params.evaluate.tfidf_logreg, params.seed)
    rows = [scored_row(ctx, setting, CLASSIFIER, test_on, list(model.classes_),
                       model.predict_proba(as_frame(test["text"])), test["label"]) for test_on, test in tests.items()]
    if encoder is not None:
        device = resolve_device(params.device)
        started = time.perf_counter()
        clf = fine_tune(encoder, list(train["text"]), list(train["label"]), params.evaluate.transformer,
                        params.seed, setting, device)
        log.info("evaluate: transformer fine-tuned on %s (%d docs) in %.0fs", setting, len(train),
                 time.perf_counter() - started)
        rows.extend(scored_row(ctx, setting, "transformer", test_on, clf.classes,
                               predict_proba(clf, list(test["text"])), test["label"])
                    for test_on, test in tests.items())
    return model, rows


def run(ctx: StageContext) -> None:
    corpus = read_corpus(ctx.input("corpus"))
    quality.check_corpus(corpus, name="evaluate_input").raise_if_failed()
    original_test = _split(corpus, "test")
    encoder = encoder_folder(ctx)
    models: dict[str, Any] = {}
    models["original"], rows = evaluate_setting("original", _split(corpus, "train"), {"original": original_test},
                                                ctx, encoder)
    for key in sorted(ctx.params.privatize.settings):
        privatized = read_corpus(ctx.input("privatized", key))
        quality.check_privatized(corpus, privatized, name=f"evaluate_input_{key}").raise_if_failed()
        tests = {"privatized": _split(privatized, "test"), "original": original_test}
        models[key], setting_rows = evaluate_setting(key, _split(privatized, "train"), tests, ctx, encoder)
        rows.extend(setting_rows)
    flat: dict[str, float] = {}
    nested: dict[str, Any] = {}
    for row in rows:
        for metric in UTILITY_METRICS:
            value = row[metric]
            if not math.isnan(value):
                flat[f"{row['setting']}.{row['classifier']}.{row['test_on']}.{metric}"] = value
            nested.setdefault(row["setting"], {}).setdefault(row["classifier"], {}).setdefault(
                row["test_on"], {})[metric] = None if math.isnan(value) else value
    report = quality.check_metrics(flat, name="evaluate_metrics", unit_interval=UTILITY_METRICS)
    report.raise_if_failed()
    ctx.log_metrics({**flat, **report.to_metrics()})
    utility = with_majority(with_drops(pd.DataFrame(rows)), original_test["label"])
    for _, row in utility[~utility["beats_majority"]].iterrows():
        log.warning("evaluate: %s on %s (tested on %s) does not beat the majority class (accuracy %.3f <= %.3f)",
                    row["classifier"], row["setting"], row["test_on"], row["accuracy"], row["majority_accuracy"])
    with atomic_path(ctx.output("utility_table")) as tmp:
        utility.to_csv(tmp, index=False, float_format="%.6f")
    ctx.tracker.log_artifact(ctx.run_id, ctx.output("utility_table"), "evaluate")
    privacy = _privacy_metrics(ctx)
    for attacks in (attacker_metrics(ctx, corpus), interest_metrics(ctx, corpus)):
        for key, attack in attacks.items():
            privacy.setdefault(key, {}).update(attack)
            ctx.log_metrics({f"{key}.{name}": value for name, value in attack.items()})
    leaks = leak_breakdown(ctx, corpus)
    with atomic_path(ctx.output("leaks")) as tmp:
        leaks.to_csv(tmp, index=False, float_format="%.6f")
    embeddings, embedding_metrics, embedding_png = evaluate_embeddings(ctx)
    ctx.log_metrics(embedding_metrics)
    write_json(nested, ctx.output("evaluate_metrics"))
    write_json({row["setting"]: {k: float(row[k]) for k in EMBEDDING_COLUMNS if not _isnan(row[k])}
                for _, row in embeddings.iterrows()}, ctx.output("evaluate_embeddings_metrics"))
    frontier = write_frontier(ctx, utility, privacy, leaks, embeddings, embedding_png)
    setting_runs = log_setting_runs(ctx, frontier, utility, privacy)
    if ctx.params.tracking.log_models:
        register_classifiers(ctx, models, setting_runs, recommend(frontier))
    log_embedding_runs(ctx, embeddings)
    log.info("evaluate: %d settings; original %s accuracy %.3f", len(ctx.params.privatize.settings),
             CLASSIFIER, flat.get(f"original.{CLASSIFIER}.original.accuracy", float("nan")))


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


def _privacy_metrics(ctx: StageContext) -> dict[str, dict[str, float]]:
    return {key: json.loads(ctx.input("privatize_metrics", key).read_text(encoding="utf-8"))
            for key in ctx.params.privatize.settings}


def attacker_metrics(ctx: StageContext, corpus: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``privacy.attacker.recall[.<LABEL>]`` per corpus: the gold test spans the detector finds again (§5)."""
    detector = load_detector(ctx.model("detector"), resolve_device(ctx.params.device))
    test = _split(corpus, "test")
    originals, spans = test["text"].tolist(), [spans_to_python(s) for s in test["spans"]]
    outputs = {"original": originals}
    for key in sorted(ctx.params.privatize.settings):
        outputs[key] = _split(read_corpus(ctx.input("privatized", key)), "test")["text"].tolist()
    return {key: {f"privacy.{name}": value
                  for name, value in attacker_recall(originals, spans, texts, detect(detector, texts)).items()}
            for key, texts in outputs.items()}


def leak_breakdown(ctx: StageContext, corpus: pd.DataFrame) -> pd.DataFrame:
    """Leaks by setting and span label on the test split (counts, rate, bootstrap interval): the report's table.

    Its ``all`` rows equal each setting's ``privacy.leak.rate`` from privatize (same spans, same rule).
    """
    test = _split(corpus, "test")
    originals, spans = test["text"].tolist(), [spans_to_python(s) for s in test["spans"]]
    counts = {"original": leak_counts(originals, spans, originals)}
    for key in sorted(ctx.params.privatize.settings):
        texts = _split(read_corpus(ctx.input("privatized", key)), "test")["text"].tolist()
        counts[key] = leak_counts(originals, spans, texts)
    options = ctx.params.evaluate.bootstrap
    return leak_table(counts, options.samples, options.level, ctx.params.seed)


def register_classifiers(ctx: StageContext, models: dict[str, Any], runs: dict[str, str], best: str | None) -> None:
    """Log each corpus's baseline classifier (with its signature) and register it as a model version.

    One version of ``tracking.registered_model`` per setting (and ``original``), tagged with its setting;
    the alias ``recommended`` moves to the recommended setting's version, so a consumer loads
    ``models:/<name>@recommended`` and gets the classifier trained on the corpus to ship.
    """
    name = ctx.params.tracking.registered_model
    for setting, model in models.items():
        run_id = runs.get(setting, ctx.run_id)
        ctx.tracker.log_sklearn_model(run_id, model, CLASSIFIER, text_column=TEXT_COLUMN)
        version = ctx.tracker.register_model(name, run_id, CLASSIFIER, {"textsift.setting": setting})
        if setting == best:
            ctx.tracker.set_model_alias(name, "recommended", version)
            log.info("evaluate: %s version %s (setting %s) is now @recommended", name, version, setting)


def interest_metrics(ctx: StageContext, corpus: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``privacy.interest.*`` per corpus (``original`` included): what the IPI attacker infers from its test
    split, against the original's inference and, where the corpus knows them, the true interests
    (:mod:`textsift.interests.attack`); nothing when train_detectors trained no interest model."""
    folder = ctx.model("interests")
    if folder is None:
        return {}
    model = load_interest_model(folder, resolve_device(ctx.params.device))
    started = time.perf_counter()
    test = _split(corpus, "test")
    truth = [None if pd.isna(t) else str(t) for t in test["interest"]]
    original = infer_interests(model, test["text"].tolist(), ctx.params.evaluate.interest_attack)
    out = {"original": {f"privacy.{name}": value for name, value in interest_accuracy(truth, original).items()}}
    for key in sorted(ctx.params.privatize.settings):
        texts = _split(read_corpus(ctx.input("privatized", key)), "test")["text"].tolist()
        inferred = infer_interests(model, texts, ctx.params.evaluate.interest_attack)
        scores = {**interest_leak(original, inferred), **interest_accuracy(truth, inferred)}
        out[key] = {f"privacy.{name}": value for name, value in scores.items()}
    log.info("evaluate: interest attacker on %d corpora in %.0fs; it finds one in %.1f%% of original test "
             "documents; accuracy on known interests %s", len(out), time.perf_counter() - started,
             100 * sum(i != "none" for i in original) / max(len(original), 1),
             f"{out['original'].get('privacy.interest.accuracy', float('nan')):.3f}")
    return out


def infer_interests(model: InterestModel, texts: list[str], attack: InterestAttackParams) -> list[str]:
    """The attacker's interest per text (:func:`textsift.interests.training.infer`); with
    ``min_evidence_overlap`` 0 only the interest is decoded (2 tokens: 3.4x faster on demo documents)."""
    if attack.min_evidence_overlap <= 0:
        return [parse(g)[0] for g in generate(model, texts, INTEREST_ONLY_TOKENS)]
    return [interest for interest, _ in infer(model, texts, attack.min_evidence_overlap)]


def _examples(ctx: StageContext) -> dict[str, list[str]]:
    """A few privatized test documents per setting (only when report.show_examples)."""
    n = ctx.params.report.examples_per_setting
    if not ctx.params.report.show_examples or n == 0:
        return {}
    out = {}
    for key in sorted(ctx.params.privatize.settings):
        privatized = read_corpus(ctx.input("privatized", key))
        out[key] = list(_split(privatized, "test")["text"].head(n))
    return out


def write_frontier(
    ctx: StageContext, utility: pd.DataFrame, privacy: dict[str, dict[str, float]], leaks: pd.DataFrame,
    embeddings: pd.DataFrame, embedding_png: bytes,
) -> pd.DataFrame:
    """Frontier table, plot and HTML report (text and embedding settings), written and logged to the parent run.

    The parent run also gets the frontier as metrics (``frontier.<setting>.utility``/``.leak_rate``) and the
    recommended setting as the tag ``textsift.recommended_setting`` (``none`` when no setting is within the
    leak ceiling), so the MLflow UI says which setting to ship. The report written as a DVC output carries
    the provenance that is the same on every reproduction (corpus and params digests); the copy logged to
    MLflow adds the run's own (commit, MLflow run id, date).
    """
    settings = ctx.params.privatize.settings
    options = ctx.params.evaluate.frontier
    rows = frontier_rows(utility, privacy, {k: s.kind for k, s in settings.items()}, options.utility,
                         leak_intervals(leaks))
    table = frontier_table(rows, options.leak_ceiling)
    png = frontier_png(table, options.utility, options.leak_ceiling)
    best = recommend(table)
    level = ctx.params.evaluate.bootstrap.level
    summary = [f"Utility: {options.utility}; leak ceiling {options.leak_ceiling:g}. Intervals: {level:.0%} "
               f"percentile bootstrap over test documents ({ctx.params.evaluate.bootstrap.samples} resamples).",
               f"Recommended setting: {best}." if best else "No privatized setting is within the leak ceiling."]
    summary.append(EMBEDDING_NOTE)
    detect_metrics = ctx.input("detect_metrics")
    detection = (detection_table(json.loads(detect_metrics.read_text(encoding="utf-8")))
                 if detect_metrics.exists() else None)
    if detection is not None and len(detection):
        summary.append(DETECTION_CAVEAT)

    def report(provenance: dict[str, str]) -> str:
        return render_report("textsift privacy-utility report", summary,
                             {"Frontier": table, "Leaks by span type (test split)": leaks,
                              "Detected types each setting protects": protected_types_table(settings),
                              "Utility of every classifier and test set": utility,
                              "Noisy sentence embeddings (METHODS.md section 3)": embeddings,
                              **({"Detection on real text and on the corpus": detection}
                                 if detection is not None and len(detection) else {})},
                             {"Privacy-utility frontier": png,
                              "Noisy sentence embeddings vs epsilon_max": embedding_png},
                             _examples(ctx), provenance)

    reproducible = reproducible_provenance(ctx)
    with atomic_path(ctx.output("frontier")) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6f")
    with atomic_path(ctx.output("frontier_plot")) as tmp:
        tmp.write_bytes(png)
    with atomic_path(ctx.output("report")) as tmp:
        tmp.write_text(report(reproducible), encoding="utf-8")
    target = ctx.parent_run_id or ctx.run_id
    ctx.tracker.set_tags(target, {"textsift.recommended_setting": best or "none"})
    ctx.tracker.log_metrics(target, {f"frontier.{row['setting']}.{column}": float(row[column])
                                     for _, row in table.iterrows() for column in ("utility", "leak_rate")
                                     if not _isnan(row[column])})
    for name in ("frontier", "frontier_plot", "leaks", "embedding_table", "embedding_plot"):
        ctx.tracker.log_artifact(target, ctx.output(name), "frontier")
    with tempfile.TemporaryDirectory() as folder:
        logged = Path(folder) / ctx.output("report").name
        logged.write_text(report({**reproducible, **run_provenance(ctx, target)}), encoding="utf-8")
        ctx.tracker.log_artifact(target, logged, "frontier")
    return table


def leak_intervals(leaks: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per setting, the bootstrap interval of its overall leak rate (the ``all`` rows)."""
    overall = leaks[leaks["label"] == ALL]
    return {str(r["setting"]): (float(r["leak_rate_ci_low"]), float(r["leak_rate_ci_high"]))
            for _, r in overall.iterrows()}


def reproducible_provenance(ctx: StageContext) -> dict[str, str]:
    """What the report was computed from, identical on every reproduction of the same inputs."""
    params = hashlib.sha256(json.dumps(ctx.declared, sort_keys=True, default=str).encode()).hexdigest()
    return {"corpus (data/ingest/corpus.parquet) sha256": content_digest(ctx.input("corpus")),
            "params sha256 (the keys evaluate declares)": params, "textsift version": _version("textsift")}


def run_provenance(ctx: StageContext, run_id: str) -> dict[str, str]:
    """What only this run has: its commit, its MLflow run and when it ran (UTC)."""
    return {"git commit": git_commit(ctx.root), "MLflow run": run_id,
            "date (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")}


def log_setting_runs(
    ctx: StageContext, frontier: pd.DataFrame, utility: pd.DataFrame, privacy: dict[str, dict[str, float]]
) -> dict[str, str]:
    """One ``frontier@<setting>`` run per setting with the same metric names for every mechanism; their ids."""
    runs: dict[str, str] = {}
    for _, row in frontier.iterrows():
        key = str(row["setting"])
        run_id = ctx.tracker.start_run(f"frontier@{key}", parent_id=ctx.parent_run_id or ctx.run_id,
                                       tags={"textsift.stage": "frontier", "textsift.setting": key,
                                             "textsift.mechanism": str(row["mechanism"]),
                                             "textsift.pareto": str(bool(row["pareto"])).lower(),
                                             "textsift.within_ceiling": str(bool(row["within_ceiling"])).lower()})
        setting = ctx.params.privatize.settings.get(key)
        if setting is not None:
            ctx.tracker.log_params(run_id, flatten(setting, prefix="setting."))
        metrics = {"frontier.utility": row["utility"], "frontier.utility_drop": row["utility_drop"],
                   "frontier.leak_rate": row["leak_rate"], "frontier.pareto": float(row["pareto"]),
                   "privacy.token_change_fraction": row["token_change"], "frontier.interest_leak": row["interest_leak"],
                   "frontier.interest_accuracy": row["interest_accuracy"]}
        metrics.update({f"frontier.{column}": row[column] for column in INTERVAL_COLUMNS})
        for _, u in utility[utility["setting"] == key].iterrows():
            for m in (*UTILITY_METRICS, *(f"{name}_drop" for name in UTILITY_METRICS)):
                metrics[f"utility.{u['classifier']}.{u['test_on']}.{m}"] = u[m]
        metrics.update(privacy.get(key, {}))
        ctx.tracker.log_metrics(run_id, {k: float(v) for k, v in metrics.items() if not _isnan(v)})
        ctx.tracker.end_run(run_id, True)
        runs[key] = run_id
    return runs


def log_embedding_runs(ctx: StageContext, embeddings: pd.DataFrame) -> None:
    """One ``frontier@<setting>`` run per noisy-embedding setting: ε_max, utility, keyword-attack success.

    Tagged ``textsift.stage = embedding_frontier``: their metrics differ from the text settings', whose
    ``frontier`` runs keep one set of names so the MLflow compare view lines them up.
    """
    for _, row in embeddings.iterrows():
        key = str(row["setting"])
        setting = ctx.params.embedding_dp.settings.get(key)
        if setting is None:
            continue
        run_id = ctx.tracker.start_run(f"frontier@{key}", parent_id=ctx.parent_run_id or ctx.run_id,
                                       tags={"textsift.stage": "embedding_frontier", "textsift.setting": key,
                                             "textsift.mechanism": f"embedding_dp_{setting.allocation}"})
        ctx.tracker.log_params(run_id, flatten(setting, prefix="setting."))
        metrics = {f"embedding.{column}": row[column] for column in (*EMBEDDING_COLUMNS, "a", "b", "gamma")}
        ctx.tracker.log_metrics(run_id, {k: float(v) for k, v in metrics.items() if not _isnan(v)})
        ctx.tracker.end_run(run_id, True)


def _isnan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
