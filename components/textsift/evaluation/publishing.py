"""evaluate, report part: the frontier, the HTML report and what goes to MLflow (METHODS.md §5).

The frontier judges every setting by the recommendation rule (``evaluate.recommend``,
:mod:`textsift.evaluation.recommend`): its verdicts, privacy risk and Pareto flags; the report states the rule
and puts the frontier beside the leak, utility, embedding and detection tables, logged to the pipeline's
parent MLflow run, whose description says what is proposed and why. One ``frontier@<setting>`` MLflow run per
setting carries the same metric names for every mechanism (``privacy_risk``, ``utility`` and their intervals),
so the MLflow UI's compare view lines them up, and each privatized corpus's baseline classifier is registered (the
original corpus's never leaves the project: :func:`register_classifiers`); the
proposed setting's version is tagged ``textsift.proposed`` — only ``textsift promote`` moves ``@recommended``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import tempfile
from datetime import UTC, datetime
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.accounting import ACCOUNTING
from textsift.catalog import path as catalog_path
from textsift.config import flatten
from textsift.evaluation.detection_quality import CAVEAT as DETECTION_CAVEAT
from textsift.evaluation.detection_quality import detection_table, protected_types_table
from textsift.evaluation.embedding_columns import EMBEDDING_COLUMNS
from textsift.evaluation.frontier import ATTACK_INTERVALS, INTERVAL_COLUMNS, frontier_rows, frontier_table
from textsift.evaluation.leak_breakdown import leak_intervals
from textsift.evaluation.ledger import NOT_DP, composed_epsilon, ledger_metrics
from textsift.evaluation.plots import frontier_png
from textsift.evaluation.recommend import Recommendation, embedding_rule_text, ranked, recommend
from textsift.evaluation.report import render_report
from textsift.evaluation.setting_utility import CLASSIFIER
from textsift.evaluation.utility import TEXT_COLUMN, UTILITY_METRICS
from textsift.stage_cache import content_digest
from textsift.stage_context import StageContext
from textsift.tracking import PRIVATIZER_TAG, RELEASE_TAG, git_commit, newest_version

log = logging.getLogger("textsift")
COMPOSED = "all DP releases"  # the ledger row that composes every DP release of a document
EMBEDDING_NOTE = (f"Noisy embeddings: {ACCOUNTING} Keyword attack: balanced accuracy (0.5 = chance) of the stronger "
                  "of two attackers, one trained on clean embeddings (attack_success_clean, the figure reported "
                  "before) and one on clean embeddings plus Laplace noise of the setting's published scales "
                  "(attack_success_noise). Cross-release: every pair of published sets solved together for the "
                  "clean embeddings (the exact solve if the two share one noise draw, and the inverse-variance "
                  "average), its cosine with them against the single set's and against what the average of "
                  "independent noise reaches (cross_release_baseline).")


def write_frontier(
    ctx: StageContext, utility: pd.DataFrame, privacy: dict[str, dict[str, float]], leaks: pd.DataFrame,
    embeddings: pd.DataFrame, embedding_png: bytes, examples: dict[str, list[str]],
) -> tuple[pd.DataFrame, Recommendation]:
    """Frontier table, plot and HTML report (text and embedding settings), written and logged to the parent run.

    The parent run also gets the frontier as metrics (``frontier.<setting>.utility``/``.privacy_risk``), the
    proposed setting as the tag ``textsift.recommended_setting`` (``none`` when no setting passes) and a
    description stating the rule, the numbers and why each other setting lost. The report written as a DVC
    output carries the provenance that is the same on every reproduction (corpus and params digests); the copy
    logged to MLflow adds the run's own (commit, MLflow run id, date).
    """
    settings = ctx.params.privatize.settings
    options = ctx.params.evaluate.frontier
    level = ctx.params.evaluate.bootstrap.level
    leak_of = ctx.params.evaluate.recommend.leak_of
    rows = frontier_rows(utility, privacy, {k: s.kind for k, s in settings.items()}, options.utility,
                         leak_intervals(leaks, leak_of), leak_of)
    refusals = {key: ctx.load("release_manifest", key)["not_served"] for key in settings}  # the mechanism's reason
    table = frontier_table(rows).assign(not_served=lambda t: [refusals.get(s, "") for s in t["setting"]])
    proposal = recommend(table, ctx.params.evaluate.recommend, options.utility, level)
    table = ranked(table, proposal)
    png = frontier_png(table, options.utility)
    summary = [f"Utility: {options.utility}. Intervals: {level:.0%} percentile bootstrap over test documents "
               f"({ctx.params.evaluate.bootstrap.samples} resamples).",
               f"The rule: {proposal.rule}", proposal.summary()]
    summary += [EMBEDDING_NOTE, embedding_rule_text(ctx.params.evaluate.recommend)]
    detect_metrics = ctx.input("detect_metrics")
    detection = (detection_table(json.loads(detect_metrics.read_text(encoding="utf-8")))
                 if detect_metrics.exists() else None)
    if detection is not None and len(detection):
        summary.append(DETECTION_CAVEAT)
    composed = composed_ledger(ctx, embeddings)
    ctx.log_metrics({f"ledger.composed.{k.removeprefix('ledger.')}": v for k, v in ledger_metrics(composed).items()})

    def report(provenance: dict[str, str]) -> str:
        return render_report("textsift privacy-utility report", summary,
                             {"Why each setting was or was not recommended": proposal.verdicts,
                              "Frontier": table, "Leaks by span type (test split)": leaks,
                              "Detected types each setting protects": protected_types_table(settings),
                              "Privacy spent per document (the ledger)": ledger_frame(privacy, embeddings, composed),
                              "Utility of every classifier and test set": utility,
                              "Noisy sentence embeddings (METHODS.md section 3)": embeddings,
                              **({"Detection on real text and on the corpus": detection}
                                 if detection is not None and len(detection) else {})},
                             {"Privacy-utility frontier": png,
                              "Noisy sentence embeddings vs epsilon_max": embedding_png},
                             examples, provenance)

    reproducible = reproducible_provenance(ctx)
    ctx.save("frontier", table)
    ctx.save("frontier_metrics", frontier_metrics(table, proposal))
    ctx.save("frontier_plot", png)
    ctx.save("report", report(reproducible))
    target = ctx.parent_run_id or ctx.run_id
    ctx.tracker.set_tags(target, {"textsift.recommended_setting": proposal.setting or "none",
                                  "mlflow.note.content": description(proposal)})
    ctx.tracker.log_metrics(target, {f"frontier.{row['setting']}.{column}": float(row[column])
                                     for _, row in table.iterrows()
                                     for column in ("utility", "leak_rate", "privacy_risk")
                                     if not isnan(row[column])})
    for path in (ctx.output("frontier"), ctx.output("frontier_plot"), ctx.input("leaks"), ctx.input("embedding_table"),
                 ctx.input("embedding_plot")):  # what the report shows, beside it on the parent run
        ctx.tracker.log_artifact(target, path, "frontier")
    with tempfile.TemporaryDirectory() as folder:
        logged = Path(folder) / ctx.output("report").name
        logged.write_text(report({**reproducible, **run_provenance(ctx, target)}), encoding="utf-8")
        ctx.tracker.log_artifact(target, logged, "frontier")
    return table, proposal


def frontier_metrics(table: pd.DataFrame, proposal: Recommendation) -> dict[str, Any]:
    """What a run decided, as a DVC metric: the proposed setting, the best one that ships as a served model, and
    per setting its utility lower bound, privacy risk and whether it passes (as a corpus release and as served)."""
    judged = table[table["setting"] != "original"]
    return {"proposed": proposal.setting or "none", "served": proposal.served_setting or "none",
            "settings": {str(row["setting"]): {"utility_low": _rounded(row.get("utility_low")),
                                               "privacy_risk": _rounded(row.get("privacy_risk")),
                                               "passes": bool(row["passes"]),
                                               "served_passes": bool(row["served_passes"])}
                         for _, row in judged.iterrows()}}


def _rounded(value: Any) -> float | None:
    return None if value is None or isnan(value) else round(float(value), 6)


def description(proposal: Recommendation) -> str:
    """The MLflow run description (markdown): the proposal, the rule and each setting's verdict."""
    lines = [f"**{proposal.summary()}**", "", f"Rule: {proposal.rule}", "",
             "| setting | privacy risk | utility lower bound | verdict |", "|---|---|---|---|"]
    lines += [f"| {r.setting} | {r.privacy_risk:.3f} | {r.utility_low:.3f} | {r.verdict} |"
              for r in proposal.verdicts.itertuples()]
    lines += ["", "A run proposes; `textsift promote SETTING --run RUN_ID --reason ...` moves `@recommended`."]
    return "\n".join(lines)


def composed_ledger(ctx: StageContext, embeddings: pd.DataFrame) -> np.ndarray:
    """Per document, the ε of every DP release of the corpus added up: each text setting's ledger
    (``data/ledger/<setting>.parquet``) and ε_max of each noisy-embedding set. Every release draws its own noise
    (:mod:`textsift.releases`), so publishing several settings of one corpus composes."""
    columns = [ctx.load("ledger", key)["epsilon"].tolist() for key in sorted(ctx.params.privatize.settings)]
    per_row = [float(row["epsilon_max"]) for _, row in embeddings.iterrows()
               if str(row["setting"]) not in ("original", "filled") and not isnan(row["epsilon_max"])]
    return composed_epsilon(columns, per_row)


def ledger_frame(privacy: dict[str, dict[str, float]], embeddings: pd.DataFrame, composed: np.ndarray
                 ) -> pd.DataFrame:
    """Per setting, its guarantee and the ε its documents spent (``data/ledger/<setting>.parquet`` summarised by
    privatize; a noisy-embedding row spends ε_max); "not DP" settings have no ε, never 0. The last row composes every
    DP release of a document (:func:`composed_ledger`); the settings that are not DP add disclosure it cannot count."""
    rows = []
    for key in sorted(k for k in privacy if k != "original"):
        metrics = privacy[key]
        dp = metrics.get("ledger.dp", 0.0) == 1.0
        rows.append({"setting": key, "guarantee": "epsilon-DP per document" if dp else NOT_DP,
                     **{f"epsilon_{q}": metrics.get(f"ledger.epsilon_{q}") if dp else None
                        for q in ("mean", "p50", "p90", "max")}})
    for _, row in embeddings.iterrows():
        if str(row["setting"]) not in ("original", "filled") and not isnan(row["epsilon_max"]):
            eps = float(row["epsilon_max"])
            rows.append({"setting": str(row["setting"]), "guarantee": "epsilon_max-DP per embedding row",
                         "epsilon_mean": eps, "epsilon_p50": eps, "epsilon_p90": eps, "epsilon_max": eps})
    if len(composed):
        summary = ledger_metrics(composed)
        rows.append({"setting": COMPOSED, "guarantee": "every DP release of a document, composed",
                     **{f"epsilon_{q}": summary[f"ledger.epsilon_{q}"] for q in ("mean", "p50", "p90", "max")}})
    return pd.DataFrame(rows, columns=["setting", "guarantee", "epsilon_mean", "epsilon_p50", "epsilon_p90",
                                       "epsilon_max"])


def reproducible_provenance(ctx: StageContext) -> dict[str, str]:
    """What the report was computed from, identical on every reproduction of the same inputs."""
    params = hashlib.sha256(json.dumps(ctx.declared, sort_keys=True, default=str).encode()).hexdigest()
    measured = {f"{catalog_path(name)} sha256": content_digest(ctx.input(name))  # the attacks' and embeddings'
                for name in ("attack_metrics", "leaks", "embedding_table")}  # params are in these digests
    return {"corpus (data/ingest/corpus.parquet) sha256": content_digest(ctx.input("corpus")), **measured,
            "params sha256 (the keys evaluate declares)": params, "textsift version": _version("textsift")}


def run_provenance(ctx: StageContext, run_id: str) -> dict[str, str]:
    """What only this run has: its commit, its MLflow run and when it ran (UTC)."""
    return {"git commit": git_commit(ctx.root), "MLflow run": run_id,
            "date (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")}


def verdict_tags(row: pd.Series, proposed: str | None) -> dict[str, str]:
    """What the rule decided about one setting, as model-version tags: proposed, passes (as a corpus release and as
    served), utility lower bound, privacy risk and the verdict in words."""
    return {"textsift.proposed": str(row["setting"] == proposed).lower(),
            "textsift.passes": str(bool(row["passes"])).lower(),
            "textsift.served_passes": str(bool(row["served_passes"])).lower(),
            "textsift.utility_low": f"{float(row['utility_low']):.6f}",
            "textsift.privacy_risk": f"{float(row['privacy_risk']):.6f}",
            "textsift.verdict": str(row["verdict"])[:4000]}


def release_digest(ctx: StageContext, setting: str) -> str:
    """The digest of the corpus ``setting`` released (``tracking.RELEASE_TAG``): what this evaluation judged."""
    return content_digest(ctx.input("privatized", setting))


def tag_privatizers(ctx: StageContext, frontier: pd.DataFrame, proposed: str | None) -> dict[str, str]:
    """Put each setting's verdict on the privatizer version that made the corpus judged here (its release digest,
    whichever pipeline run registered it: an outsider stage taken from the cache registers nothing), so the
    registry entry that ships a setting says how it was judged and in which run; the version per setting, which
    each classifier names (:data:`PRIVATIZER_TAG`) so ``textsift promote`` ships exactly it."""
    name, pipeline_run = ctx.params.tracking.registered_privatizer, ctx.parent_run_id or ctx.run_id
    versions = ctx.tracker.model_versions(name)  # one registry search for every setting
    judged: dict[str, str] = {}
    for _, row in frontier[frontier["setting"] != "original"].iterrows():
        setting = str(row["setting"])
        version = newest_version(versions, setting, release=release_digest(ctx, setting))
        if version is not None:
            ctx.tracker.tag_model(name, {**verdict_tags(row, proposed), "textsift.judged_in": pipeline_run},
                                  version=version["version"])
            judged[setting] = version["version"]
    return judged


def register_classifiers(ctx: StageContext, models: dict[str, Any], runs: dict[str, str], proposed: str | None,
                         privatizers: dict[str, str]) -> None:
    """Log each privatized corpus's baseline classifier (with its signature) and register it as a model version.

    One version of ``tracking.registered_model`` per setting, tagged with its setting and the pipeline run; the
    proposed setting's version is tagged ``textsift.proposed``. The alias ``recommended`` is never moved here: a
    run proposes, a person promotes (``textsift promote``, :mod:`textsift.promote`).

    The classifier of the ``original`` corpus is scored (the reference of every utility drop) but never logged:
    whatever is logged is published, and its fitted TF-IDF ``idf_`` and the non-zero pattern of its coefficients
    tell, per hashed n-gram, whether the raw training text held it, so anyone who hashes a candidate name, phone
    number or e-mail learns whether it was in a training document (every one was flagged, no outsider). Dropping
    the IDF would not help, the coefficients give it away alike. A privatized corpus's classifier holds nothing
    its published corpus does not, and only those can be promoted and shipped.
    """
    name = ctx.params.tracking.registered_model
    pipeline_run = ctx.parent_run_id or ctx.run_id
    for setting, model in models.items():
        if setting == "original":
            continue
        run_id = runs.get(setting, ctx.run_id)
        ctx.tracker.log_sklearn_model(run_id, model, CLASSIFIER, text_column=TEXT_COLUMN)
        tags = {"textsift.setting": setting, "textsift.pipeline_run": pipeline_run,
                "textsift.proposed": str(setting == proposed).lower(), RELEASE_TAG: release_digest(ctx, setting),
                PRIVATIZER_TAG: privatizers.get(setting, "none")}  # the served form judged with it, or none
        version = ctx.tracker.register_model(name, run_id, CLASSIFIER, tags)
        if setting == proposed:
            log.info("evaluate: %s version %s (setting %s) is proposed; `textsift promote %s --run %s` makes it "
                     "@recommended", name, version, setting, setting, pipeline_run)


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
                                             "textsift.passes": str(bool(row["passes"])).lower(),
                                             "textsift.served_passes": str(bool(row["served_passes"])).lower(),
                                             "textsift.recommended": str(bool(row["recommended"])).lower(),
                                             "mlflow.note.content": f"{key}: {row['verdict']}"})
        setting = ctx.params.privatize.settings.get(key)
        if setting is not None:
            ctx.tracker.log_params(run_id, flatten(setting, prefix="setting."))
        metrics = {"privacy_risk": row["privacy_risk"], "utility": row["utility"],
                   "utility_ci_low": row["utility_ci_low"], "utility_ci_high": row["utility_ci_high"],
                   "frontier.utility": row["utility"], "frontier.utility_drop": row["utility_drop"],
                   "frontier.leak_rate": row["leak_rate"], "frontier.pareto": float(row["pareto"]),
                   "privacy.token_change_fraction": row["token_change"], "frontier.interest_leak": row["interest_leak"],
                   "frontier.interest_accuracy": row["interest_accuracy"], "frontier.served_leak": row["served_leak"]}
        metrics.update({f"frontier.{column}": row[column] for column in INTERVAL_COLUMNS})
        metrics.update({f"frontier.{c}_ci_{side}": row[f"{c}_ci_{side}"] for c in ATTACK_INTERVALS
                        for side in ("low", "high")})
        for _, u in utility[utility["setting"] == key].iterrows():
            for m in (*UTILITY_METRICS, *(f"{name}_drop" for name in UTILITY_METRICS)):
                metrics[f"utility.{u['classifier']}.{u['test_on']}.{m}"] = u[m]
        metrics.update(privacy.get(key, {}))
        ctx.tracker.log_metrics(run_id, {k: float(v) for k, v in metrics.items() if not isnan(v)})
        ctx.tracker.end_run(run_id, True)
        runs[key] = run_id
    return runs


def log_embedding_runs(ctx: StageContext, embeddings: pd.DataFrame) -> None:
    """One ``frontier@<setting>`` run per noisy-embedding setting: ε_max, utility, the attacks and privacy risk
    (from ``evaluate_embeddings``' table, so every pipeline run that judges has them, that stage cached or not).

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
                                             "textsift.mechanism": f"embedding_dp_{setting.allocation}",
                                             "textsift.passes": str(bool(row.get("passes", False))).lower()})
        ctx.tracker.log_params(run_id, flatten(setting, prefix="setting."))
        metrics = {f"embedding.{column}": row.get(column) for column in (*EMBEDDING_COLUMNS, "a", "b", "gamma")}
        metrics.update({"privacy_risk": row.get("privacy_risk"), "utility": row.get("utility")})
        ctx.tracker.log_metrics(run_id, {k: float(v) for k, v in metrics.items() if not isnan(v)})
        ctx.tracker.end_run(run_id, True)


def isnan(value: Any) -> bool:
    """Whether a table cell is missing (None or NaN), so no metric is logged for it."""
    return value is None or (isinstance(value, float) and math.isnan(value))
