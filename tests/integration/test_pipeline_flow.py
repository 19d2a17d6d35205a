"""The Prefect flow end to end: real flow run, real MLflow store, real GX suites; no document text in what it logs to
MLflow and Prefect."""

from __future__ import annotations

import html as htmllib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from mlflow.tracking import MlflowClient
from prefect.artifacts import Artifact
from prefect.logging.handlers import APILogHandler

from flows.run_summary import ARTIFACT_KEY, TIMES_KEY
from tests.integration.conftest import flow_run_logs
from textsift.artifacts import FILL_IN_POINTER, MODEL_CACHE, detector_folder, read_pointer
from textsift.config import load_params
from textsift.corpus import read_corpus
from textsift.errors import QualityError
from textsift.runner import run_stage

pytestmark = pytest.mark.integration


def test_flow_writes_every_output(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    ingest = json.loads((root / "metrics/ingest.json").read_text())
    assert len(corpus) == ingest["docs.accepted"] > 100
    assert ingest["docs.read"] == 120
    assert set(corpus["split"]) == {"train", "validation", "test"}
    assert corpus["spans"].map(len).sum() > 0
    evaluation = json.loads((root / "metrics/evaluate.json").read_text())
    assert 0.5 < evaluation["original"]["tfidf_logreg"]["original"]["accuracy"] <= 1.0
    table = pd.read_csv(root / "reports/evaluate/utility.csv")
    assert set(table["setting"]) == {"original", "ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red"}
    for key in ("ds", "ds2", "mdp", "red"):
        privatized = read_corpus(root / f"data/privatized/{key}.parquet")
        assert privatized[["doc_id", "label", "split"]].equals(corpus[["doc_id", "label", "split"]])


def test_mlflow_has_one_parent_and_a_child_per_stage(flow_run: dict) -> None:
    result = flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    parent = client.get_run(result["parent_run_id"])
    assert parent.info.status == "FINISHED"
    assert parent.info.run_name.startswith("pipeline ") and parent.info.run_name.endswith(" demo")
    assert parent.data.params["ingest.split.test"] == "0.2"
    assert parent.data.tags["textsift.git_commit"]
    children = client.search_runs(
        [result["experiment_id"]], f"tags.mlflow.parentRunId = '{parent.info.run_id}'"
    )
    by_stage = {run.data.tags["textsift.instance"]: run for run in children if "textsift.instance" in run.data.tags}
    assert set(by_stage) == {"key", "ingest", "train_detectors", "train_interests", "detect", "train_fill_in",
                             "build_indexes@w2v", "build_indexes@glove", "privatize@ds", "privatize@ds2",
                             "privatize@mdp", "privatize@mdp_det", "privatize@mdp_pub", "privatize@red",
                             *(f"outsider@{k}" for k in ("ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red")),
                             "lrp_budgets", "embedding_dp@lrp_eps50", "embedding_dp@uniform_eps50", "attack",
                             "evaluate_embeddings", "evaluate"}
    assert all(run.info.status == "FINISHED" for run in children)
    assert by_stage["privatize@mdp"].data.params["privatize.settings.mdp.epsilon"] == "20.0"
    assert "seed" in by_stage["privatize@mdp"].data.params  # an experiment run logs its seed
    assert by_stage["ingest"].data.params["ingest.max_chars"] == "20000"
    assert by_stage["ingest"].data.metrics["docs.read"] == 120
    assert by_stage["ingest"].data.metrics["quality.ingest_corpus.failed"] == 0
    evaluate = by_stage["evaluate"]
    assert 0 < evaluate.data.metrics["original.tfidf_logreg.original.accuracy"] <= 1
    artifacts = {a.path for a in client.list_artifacts(evaluate.info.run_id)}
    assert "evaluate" in artifacts  # the tables; each privatized corpus's classifier is in its frontier@ run
    runs = {key: client.search_runs([result["experiment_id"]], f"tags.`textsift.setting` = '{key}'")[0]
            for key in ("original", "red")}
    assert "tfidf_logreg/MLmodel" in {a.path for a in client.list_artifacts(runs["red"].info.run_id, "tfidf_logreg")}
    assert not client.list_artifacts(runs["original"].info.run_id, "tfidf_logreg")  # raw text: never logged


def test_noisy_embeddings_are_published_with_their_manifest_and_evaluated(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    fit = pd.read_parquet(root / "data/lrp_budgets/embeddings.parquet")
    basis = np.stack(fit["embedding"].to_numpy())
    for key, allocation in (("lrp_eps50", "lrp"), ("uniform_eps50", "uniform")):
        published = pd.read_parquet(root / f"data/embeddings/{key}.parquet")
        assert published[["doc_id", "label", "split"]].equals(corpus[["doc_id", "label", "split"]])
        assert list(published.columns) == ["doc_id", "split", "label", "embedding"]  # no text, no clean vectors
        manifest = json.loads((root / f"data/embeddings/{key}.manifest.json").read_text())
        assert manifest["allocation"] == allocation and manifest["epsilon_max"] == 50
        assert sum(manifest["epsilon_d"]) == pytest.approx(50, rel=1e-9)  # sequential composition: Σ ε_d = ε_max
        noise = np.stack(published["embedding"].to_numpy()) - basis
        scale = np.array(manifest["laplace_scale"])
        np.testing.assert_allclose(np.abs(noise).mean(axis=0).mean() / scale.mean(), 1.0, rtol=0.1)  # E|Lap(λ)| = λ
    assert manifest["a"] is None
    # two published sets of the same rows are two equations: with one shared draw they solve for the clean basis
    (y1, s1), (y2, s2) = ((np.stack(pd.read_parquet(root / f"data/embeddings/{k}.parquet")["embedding"].to_numpy()),
                           np.array(json.loads((root / f"data/embeddings/{k}.manifest.json").read_text())[
                               "laplace_scale"])) for k in ("lrp_eps50", "uniform_eps50"))
    apart = np.abs(s1 - s2) > 0.05 * np.maximum(s1, s2)
    assert apart.sum() >= 8
    solved = (s2 * y1 - s1 * y2)[:, apart] / (s2 - s1)[apart]
    best_single = np.minimum(np.abs(y1 - basis).mean(axis=0), np.abs(y2 - basis).mean(axis=0))[apart].mean()
    assert np.abs(solved - basis[:, apart]).mean() > best_single  # independent draws: worse than the better set
    table = pd.read_csv(root / "reports/evaluate/embedding_dp.csv")
    assert list(table["setting"]) == ["original", "filled", "lrp_eps50", "uniform_eps50"]
    assert table[["roc_auc", "attack_success"]].apply(lambda c: c.between(0, 1)).all().all()
    evaluation = json.loads((root / "metrics/evaluate_embeddings.json").read_text())
    assert set(evaluation) == {"original", "filled", "lrp_eps50", "uniform_eps50"}
    assert evaluation["lrp_eps50"]["epsilon_max"] == 50
    html = (root / "reports/evaluate/report.html").read_text()
    assert "Noisy sentence embeddings" in html


def test_each_privatized_corpus_classifier_is_registered_with_a_signature_and_only_a_person_moves_the_alias(
        flow_run: dict, tmp_path: Path) -> None:
    import mlflow.pyfunc

    from textsift.config import load_params
    from textsift.errors import ConfigError
    from textsift.promote import check_promoted, promote
    from textsift.tracking import Tracker

    result = flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    versions = client.search_model_versions("name = 'textsift-classifier'")
    by_setting = {v.tags["textsift.setting"]: v for v in versions}
    assert set(by_setting) == {"ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red"}
    assert len(versions) == 6  # not the original
    proposed = client.get_run(result["parent_run_id"]).data.tags["textsift.recommended_setting"]
    assert [k for k, v in by_setting.items() if v.tags["textsift.proposed"] == "true"] == (
        [proposed] if proposed != "none" else [])
    assert not any(client.get_model_version("textsift-classifier", v.version).aliases for v in versions)  # a run
    # only proposes; a person promotes, with a reason, and a setting that failed the rule needs --accept-failing
    tracker = Tracker(load_params(flow_run["root"] / "params.yaml").tracking, flow_run["root"])
    frontier = pd.read_csv(flow_run["root"] / "reports/evaluate/frontier.csv").set_index("setting")
    by_hand = client.search_model_versions("name = 'textsift-privatizer'")[0].version
    client.set_registered_model_alias("textsift-privatizer", "recommended", by_hand)  # before any promote
    with pytest.raises(ConfigError, match="no `textsift promote` is recorded"):
        check_promoted(tracker, "models:/textsift-privatizer@recommended")
    client.delete_registered_model_alias("textsift-privatizer", "recommended")
    failing = sorted(k for k in by_setting if not frontier.loc[k, "passes"])
    if failing:
        with pytest.raises(ConfigError, match="did not pass the recommendation rule"):
            promote(tracker, "textsift-classifier", failing[0], result["parent_run_id"], "try")
    done = promote(tracker, "textsift-classifier", "ds", result["parent_run_id"], "reviewed the report",
                   accept_failing=True, by="tester", privatizer="textsift-privatizer")
    assert done.privatizer_version is None  # DataSifterText is not served
    promote(tracker, "textsift-classifier", "mdp_pub", result["parent_run_id"], "metric-DP over a public vocabulary",
            accept_failing=True, by="tester", privatizer="textsift-privatizer")  # ships as redaction does
    assert client.get_model_version_by_alias("textsift-privatizer", "recommended").tags["textsift.setting"] == "mdp_pub"
    check_promoted(tracker, "models:/textsift-privatizer@recommended")
    served = promote(tracker, "textsift-classifier", "red", result["parent_run_id"], "then chose redaction",
                     accept_failing=True, by="tester", privatizer="textsift-privatizer")
    privatizer = client.get_model_version_by_alias("textsift-privatizer", "recommended")
    assert str(privatizer.version) == served.privatizer_version and privatizer.tags["textsift.setting"] == "red"
    # the registry entry that ships a setting says how the rule judged it
    assert privatizer.tags["textsift.verdict"] == frontier.loc["red", "verdict"]
    assert privatizer.tags["textsift.passes"] == str(bool(frontier.loc["red", "passes"])).lower()
    assert float(privatizer.tags["textsift.privacy_risk"]) == pytest.approx(frontier.loc["red", "privacy_risk"])
    uri = "models:/textsift-privatizer@recommended"
    check_promoted(tracker, uri)  # where promote put it: served
    moved = client.create_model_version("textsift-privatizer", privatizer.source, run_id=privatizer.run_id)
    try:  # the MLflow UI's alias pencil: no verdict, no reason, no history
        client.set_registered_model_alias("textsift-privatizer", "recommended", moved.version)
        with pytest.raises(ConfigError, match=f"points at version {moved.version}, but the last `textsift promote` "
                                              f"put it on version {served.privatizer_version}"):
            check_promoted(tracker, uri)
        check_promoted(tracker, f"models:/textsift-privatizer/{moved.version}")  # a number: the caller's choice
    finally:
        client.set_registered_model_alias("textsift-privatizer", "recommended", served.privatizer_version)
        client.delete_model_version("textsift-privatizer", moved.version)
    done = promote(tracker, "textsift-classifier", "ds", result["parent_run_id"], "reviewed the report",
                   accept_failing=True, by="tester", privatizer="textsift-privatizer")
    assert tracker.alias_version("textsift-privatizer", "recommended") is None  # never left on another setting
    version = client.get_model_version_by_alias("textsift-classifier", "recommended")
    assert str(version.version) == done.version == str(by_setting["ds"].version)
    assert done.previous == served.version  # each move records what it replaced
    assert version.tags["textsift.promoted_by"] == "tester"
    assert version.tags["textsift.promotion_reason"] == "reviewed the report"
    history = [v for k, v in client.get_registered_model("textsift-classifier").tags.items()
               if k.startswith("textsift.promotion.")]
    assert len(history) >= 2 and any('"setting": "red"' in h for h in history)
    with pytest.raises(ConfigError, match="say why"):
        promote(tracker, "textsift-classifier", "ds", result["parent_run_id"], " ")
    # red releases a corpus with gold + detected spans replaced and serves detected spans only: judged as served too
    red = json.loads((flow_run["root"] / "metrics/privatize/red.json").read_text())
    red.update(json.loads((flow_run["root"] / "metrics/outsider/red.json").read_text()))
    assert red["served.leak.rate"] >= red["privacy.leak.rate"]
    red_run = by_setting["red"].run_id
    assert client.get_run(red_run).data.tags["textsift.served_passes"] in ("true", "false")
    judged = client.get_run(red_run).data.tags
    client.set_tag(red_run, "textsift.passes", "true")  # a corpus that passes, a service that does not
    client.set_tag(red_run, "textsift.served_passes", "false")
    try:
        with pytest.raises(ConfigError, match="served form did not pass"):
            promote(tracker, "textsift-classifier", "red", result["parent_run_id"], "the corpus passed",
                    privatizer="textsift-privatizer")
    finally:
        client.set_tag(red_run, "textsift.passes", judged["textsift.passes"])
        client.set_tag(red_run, "textsift.served_passes", judged["textsift.served_passes"])
    # no fluent mlflow.set_tracking_uri (it sets MLFLOW_TRACKING_URI for the whole process): download, then load
    local = client.download_artifacts(by_setting["red"].run_id, "tfidf_logreg", str(tmp_path))
    model = mlflow.pyfunc.load_model(local)
    assert model.metadata.get_input_schema().input_names() == ["text"]
    predicted = model.predict(pd.DataFrame({"text": ["a wonderful film", "an awful film"]}))
    assert set(np.asarray(predicted).ravel()) <= {"pos", "neg"}


def test_each_stage_run_names_the_datasets_it_read_and_wrote_by_digest_never_rows(flow_run: dict) -> None:
    import hashlib

    result = flow_run["result"]
    client = MlflowClient(result["tracking_uri"])

    def datasets(stage: str) -> dict[str, tuple[str, str, dict]]:
        run = client.search_runs([result["experiment_id"]], f"tags.`textsift.stage` = '{stage}'")[0]
        return {d.dataset.name: (d.tags[0].value, d.dataset.digest, json.loads(d.dataset.profile))
                for d in run.inputs.dataset_inputs}

    corpus = flow_run["root"] / "data/ingest/corpus.parquet"
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:36]
    rows = len(read_corpus(corpus))
    ingest = datasets("ingest")
    assert ingest["data/ingest/corpus.parquet"] == ("output", digest, {"bytes": corpus.stat().st_size, "rows": rows})
    evaluate = datasets("evaluate")
    assert evaluate["data/ingest/corpus.parquet"][:2] == ("input", digest)
    assert {f"data/privatized/{k}.parquet" for k in ("ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red")} <= set(evaluate)
    assert all(profile["rows"] == rows for name, (_, _, profile) in evaluate.items() if "privatized" in name)


# The frontier across every privatized setting, its MLflow runs, and the HTML report (read only: before the tests
# below, which damage the project and rerun it).

def test_frontier_table_has_every_setting_with_flags(flow_run: dict) -> None:
    table = pd.read_csv(flow_run["root"] / "reports/evaluate/frontier.csv")
    assert set(table["setting"]) == {"original", "ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red"}
    assert set(table["mechanism"]) == {"none", "datasifter", "metric_dp", "redact"}
    assert table["pareto"].any()
    assert table["leak_rate"].between(0, 1).all()
    original = table.set_index("setting").loc["original"]
    assert original["utility_drop"] == 0 and original["leak_rate"] == 1 and original["interest_leak"] == 1
    assert table["interest_accuracy"].between(0, 1).all()  # the demo plants interests: every row is scored
    utility = pd.read_csv(flow_run["root"] / "reports/evaluate/utility.csv")
    assert set(utility["classifier"]) == {"tfidf_logreg", "transformer"}
    assert set(utility[utility["setting"] == "ds"]["test_on"]) == {"privatized", "original"}
    # why a setting is not served comes from its release's manifest (evaluate imports no mechanism)
    manifests = {key: json.loads((flow_run["root"] / f"data/privatized/{key}.manifest.json").read_text())
                 for key in ("ds", "mdp", "mdp_pub", "red")}
    refusals = table.set_index("setting")["not_served"].fillna("")
    assert [key for key, m in manifests.items() if m["served"]] == ["mdp_pub", "red"]
    assert all(refusals[key] == m["not_served"] for key, m in manifests.items())
    assert "vocabulary: public" in refusals["mdp"] and "other documents of the corpus" in refusals["ds"]
    assert [m["fills_from_corpus"] for m in manifests.values()] == [True, True, False, False]  # mdp_pub: GloVe's


def test_every_setting_run_has_the_same_metric_names(flow_run: dict) -> None:
    result = flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    runs = client.search_runs([result["experiment_id"]], "tags.`textsift.stage` = 'frontier'")
    by_setting = {r.data.tags["textsift.setting"]: r for r in runs}
    assert set(by_setting) == {"original", "ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red"}
    shared = {"frontier.utility", "frontier.utility_drop", "frontier.leak_rate", "frontier.pareto",
              "privacy.token_change_fraction", "utility.tfidf_logreg.original.accuracy", "privacy.attacker.recall"}
    for run in runs:
        assert shared <= set(run.data.metrics), run.data.tags["textsift.setting"]
    for key in ("ds", "ds2", "mdp", "red"):
        assert "privacy.leak.rate" in by_setting[key].data.metrics
        assert 0 <= by_setting[key].data.metrics["privacy.interest.agreement"] <= 1  # the IPI attacker ran
        assert 0 <= by_setting[key].data.metrics["frontier.interest_accuracy"] <= 1  # ... against the truth
        assert "utility.transformer.privatized.accuracy" in by_setting[key].data.metrics
    assert by_setting["mdp"].data.params["setting.epsilon"] == "20.0"
    assert by_setting["red"].data.tags["textsift.mechanism"] == "redact"
    assert by_setting["red"].data.metrics["privacy.leak.rate"] <= 0.02  # gold + detected spans, every occurrence
    assert by_setting["red"].data.metrics["redact.docs_redacted_fraction"] > 0.5  # most demo documents hold data
    assert 0 <= by_setting["mdp"].data.metrics["metric_dp.deniability.N_w.mean"] <= 1
    assert by_setting["mdp"].data.metrics["metric_dp.deniability.S_w.mean"] >= 1
    assert "datasifter.masked_fraction_mean" in by_setting["ds"].data.metrics
    drop = by_setting["ds"].data.metrics["utility.tfidf_logreg.original.accuracy_drop"]
    assert drop == pytest.approx(by_setting["ds"].data.metrics["frontier.utility_drop"])
    frontier = pd.read_csv(flow_run["root"] / "reports/evaluate/frontier.csv")
    for _, row in frontier.iterrows():
        tags = by_setting[row["setting"]].data.tags
        assert tags["textsift.pareto"] == str(bool(row["pareto"])).lower()
        assert tags["textsift.passes"] == str(bool(row["passes"])).lower()
        assert tags["mlflow.note.content"] == f"{row['setting']}: {row['verdict']}"  # the run's description
        metrics = by_setting[row["setting"]].data.metrics
        assert 0 <= metrics["privacy_risk"] <= 1  # the CSV keeps 6 decimals
        assert metrics["privacy_risk"] == pytest.approx(row["privacy_risk"], abs=1e-6)
        assert metrics["utility"] == pytest.approx(row["utility"], abs=1e-6) and "utility_ci_low" in metrics
    parent = client.get_run(result["parent_run_id"])
    html = (flow_run["root"] / "reports/evaluate/report.html").read_text(encoding="utf-8")
    recommended = parent.data.tags["textsift.recommended_setting"]
    assert (f"Recommended setting: {recommended} (" in html if recommended != "none"
            else "No setting passes every criterion: nothing is recommended." in html)
    assert "bootstrap upper bound" in html and "Why each setting was or was not recommended" in html
    description = parent.data.tags["mlflow.note.content"]
    assert "Rule: A setting passes when every privacy criterion holds" in description
    assert all(f"| {key} |" in description for key in ("ds", "ds2", "mdp", "mdp_det", "mdp_pub", "red"))
    proposed = frontier[frontier["recommended"]]
    assert list(proposed["setting"]) == ([recommended] if recommended != "none" else [])
    assert proposed["passes"].all()  # the proposal passes every stated criterion
    assert parent.data.metrics["frontier.mdp.leak_rate"] == pytest.approx(
        float(frontier.loc[frontier["setting"] == "mdp", "leak_rate"].iloc[0]))
    parent_artifacts = {a.path for a in client.list_artifacts(result["parent_run_id"], "frontier")}
    assert {"frontier/report.html", "frontier/frontier.png", "frontier/frontier.csv",
            "frontier/embedding_dp.png", "frontier/embedding_dp.csv"} <= parent_artifacts
    embedding = {r.data.tags["textsift.setting"]: r for r in
                 client.search_runs([result["experiment_id"]], "tags.`textsift.stage` = 'embedding_frontier'")}
    assert set(embedding) == {"lrp_eps50", "uniform_eps50"}
    for run in embedding.values():
        assert {"embedding.epsilon_max", "embedding.roc_auc", "embedding.attack_success_all"} <= set(run.data.metrics)
    for run in embedding.values():
        assert {"embedding.attack_success_clean_all", "embedding.attack_success_noise_all", "embedding.keyword_gain",
                "embedding.single_cosine", "embedding.cross_release_cosine", "embedding.cross_release_baseline",
                "embedding.cross_release_gain", "privacy_risk"} <= set(run.data.metrics)
        assert 0 <= run.data.metrics["privacy_risk"] <= 1
    assert embedding["uniform_eps50"].data.tags["textsift.mechanism"] == "embedding_dp_uniform"
    assert embedding["lrp_eps50"].data.params["setting.allocation"] == "lrp"


def test_the_strongest_attacker_is_reported_and_two_published_sets_do_not_solve_for_the_clean_ones(
        flow_run: dict) -> None:
    """The embedding table reports the stronger keyword attacker (clean-trained or noise-aware) next to the old
    clean-trained figure, and the cross-release solver on the pipeline's two published sets. Two sets that scale one
    noise draw solve exactly (gain 1.0, cosine 1.000); independent draws leave the solver at the composition
    baseline (gain about 0): this fails on the shared-noise design."""
    root: Path = flow_run["root"]
    table = pd.read_csv(root / "reports/evaluate/embedding_dp.csv").set_index("setting")
    settings = table.loc[["lrp_eps50", "uniform_eps50"]]
    assert (settings["attack_success"] >= settings["attack_success_clean"] - 1e-9).all()
    assert (settings["attack_success"] >= settings["attack_success_noise_all"] - 1e-9).all()
    assert set(settings["cross_release_partner"]) == {"lrp_eps50", "uniform_eps50"}
    ceiling = load_params(root / "params.yaml").evaluate.recommend.cross_release_gain
    assert (settings["cross_release_gain"] <= ceiling).all(), settings["cross_release_gain"]  # 1.0 if shared
    assert (settings["cross_release_cosine"] < 0.99).all()
    assert settings["privacy_risk"].between(0, 1).all() and table.loc["filled", "single_cosine"] == 1.0
    risk = settings[["keyword_gain", "cross_release_gain"]].max(axis=1)
    assert (settings["privacy_risk"] - risk).abs().max() < 1e-6  # the largest criterion
    frontier = pd.read_csv(root / "reports/evaluate/frontier.csv").set_index("setting")
    kinds = {name: s.kind for name, s in load_params(root / "params.yaml").privatize.settings.items()}
    # redaction's stand-ins come from Faker, a public vocabulary's words from GloVe: another name there is chance
    filled = [name for name in kinds if json.loads((root / f"data/privatized/{name}.manifest.json").read_text())[
        "fills_from_corpus"]]
    assert "red" not in filled and "mdp_pub" not in filled and "mdp" in filled
    measured = frontier.loc[filled, "cross_document"]
    assert len(filled) >= 2 and measured.between(0, 1).all()  # the demo has gold person names: each is measured
    assert frontier.loc[[n for n in kinds if n not in filled], "cross_document"].isna().all()
    assert (frontier.loc[filled, "privacy_risk"] >= measured - 1e-6).all()


def test_intervals_leaks_by_type_and_provenance_in_the_report(flow_run: dict, tmp_path: Path) -> None:
    root: Path = flow_run["root"]
    result = flow_run["result"]
    frontier = pd.read_csv(root / "reports/evaluate/frontier.csv").set_index("setting")
    assert (frontier["utility_ci_low"] <= frontier["utility"]).all()
    assert (frontier["utility"] <= frontier["utility_ci_high"]).all()
    assert (frontier["utility_ci_high"] - frontier["utility_ci_low"] > 0).any()
    gold = frontier[frontier["leak_source"].str.startswith("gold spans")]
    assert len(gold) > 1
    assert (gold["leak_rate_ci_low"] <= gold["leak_rate"] + 1e-9).all()
    assert (gold["leak_rate"] <= gold["leak_rate_ci_high"] + 1e-9).all()
    leaks = pd.read_csv(root / "reports/evaluate/leaks.csv")
    overall = leaks[leaks["label"] == "direct"].set_index("setting")  # the rule counts the direct identifiers
    for setting in ("ds", "mdp", "red"):  # the same spans and rule as privatize's leak rate
        assert overall.loc[setting, "leak_rate"] == pytest.approx(frontier.loc[setting, "leak_rate"])
    every = leaks[leaks["label"] == "all"].set_index("setting")
    rows = leaks[leaks["setting"] == "ds"].set_index("label")
    per_type = rows.drop(index=["all", "direct", "quasi"])
    assert per_type["spans"].sum() == every.loc["ds", "spans"] and "PERSON" in set(per_type.index)
    assert rows.loc["direct", "spans"] + rows.loc["quasi", "spans"] == every.loc["ds", "spans"]
    html = (root / "reports/evaluate/report.html").read_text(encoding="utf-8")
    import hashlib

    digest = hashlib.sha256((root / "data/ingest/corpus.parquet").read_bytes()).hexdigest()
    assert "Leaks by span type" in html and digest in html
    assert "MLflow run" not in html  # the DVC output holds what every reproduction shares, no run ids
    client = MlflowClient(result["tracking_uri"])
    logged = Path(client.download_artifacts(result["parent_run_id"], "frontier/report.html", str(tmp_path)))
    text = logged.read_text(encoding="utf-8")
    assert digest in text and result["parent_run_id"] in text and "git commit" in text


def test_report_shows_no_original_text(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    html = (root / "reports/evaluate/report.html").read_text(encoding="utf-8")
    assert "Privacy-utility frontier" in html and "data:image/png;base64," in html
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    privatized = {key: read_corpus(root / f"data/privatized/{key}.parquet") for key in ("ds", "ds2", "mdp", "red")}
    assert "Privatized examples" in html  # show_examples is on in this run
    assert [text for text in corpus["text"] if htmllib.escape(text) in html] == []
    leak = {key: json.loads((root / f"metrics/privatize/{key}.json").read_text())["privacy.leak.rate"]
            for key in privatized}
    ceiling = load_params(root / "params.yaml").evaluate.recommend.leak_rate
    examples = {key: [htmllib.escape(t) for t in frame[frame["split"] == "test"]["text"].head(3)]
                for key, frame in privatized.items()}
    shown = [t for key, texts in examples.items() if leak[key] <= ceiling for t in texts]
    assert shown and all(t in html for t in shown)  # the examples are privatized test documents
    hidden = [t for key, texts in examples.items() if leak[key] > ceiling for t in texts]
    assert not [t for t in hidden if t in html and t not in shown]  # a setting above the ceiling shows none
    secrets = {text[s["start"]:s["end"]] for text, spans in zip(corpus["text"], corpus["spans"], strict=True)
               for s in spans if s["end"] - s["start"] >= 6}
    outside_examples = html
    for t in shown:
        outside_examples = outside_examples.replace(t, "")
    assert [s for s in secrets if htmllib.escape(s) in outside_examples] == []


def _secrets(root: Path) -> list[str]:
    """Every document text, and every planted personal-data value of 6+ characters."""
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    values = set(corpus["text"])
    for text, spans in zip(corpus["text"], corpus["spans"], strict=True):
        values.update(text[s["start"]:s["end"]] for s in spans if s["end"] - s["start"] >= 6)
    return sorted(values)


# The report's privatized examples are output this run asks for (``report.show_examples``): what a mechanism left of a
# document may show there. Everything else in the report is scanned.
SHOWN_EXAMPLES = re.compile(r"<h2>Privatized examples</h2>.*?(?=<h2>|</body>)", re.DOTALL)


def _readable(path: Path) -> str:
    """A file's bytes as text; of a safetensors file its header (tensor names and metadata) only: the rest is the
    weights' numbers, 93% of what the run logs (the interest model's), where no string is to be found."""
    data = path.read_bytes()
    if path.suffix == ".safetensors":
        header = data[8:8 + int.from_bytes(data[:8], "little")]
        assert json.loads(header), path  # a header, not a file cut short whose "header" would be scanned for nothing
        data = header
    text = data.decode("utf-8", "replace")
    return f"{text}\n{htmllib.unescape(text)}" if path.suffix == ".html" else text  # "O&#x27;Brien" is O'Brien


def _mlflow_blobs(result: dict, dest: Path) -> dict[str, str]:
    """Everything MLflow holds for the run's experiment, keyed by where it was found (the report's examples cut)."""
    client = MlflowClient(result["tracking_uri"])
    runs = client.search_runs([result["experiment_id"]])
    blobs = {}
    for run in runs:
        name = run.info.run_name
        blobs.update({f"{name} param {k}": f"{k}={v}" for k, v in run.data.params.items()})
        blobs.update({f"{name} tag {k}": f"{k}={v}" for k, v in run.data.tags.items()})
        blobs.update({f"{name} metric {k}": k for k in run.data.metrics})
        local = Path(client.download_artifacts(run.info.run_id, "", str(dest / run.info.run_id)))
        blobs.update({f"{name} artifact {p.relative_to(local)}": _readable(p) for p in local.rglob("*") if p.is_file()})
    shown = {where: SHOWN_EXAMPLES.sub("", blob) for where, blob in blobs.items() if where.endswith("report.html")}
    assert shown and all(len(blobs[where]) > len(blob) for where, blob in shown.items())  # examples were there, cut
    return {**blobs, **shown}


def test_no_document_text_in_mlflow(flow_run: dict, tmp_path: Path) -> None:
    secrets = _secrets(flow_run["root"])
    assert len(secrets) > 100
    blobs = _mlflow_blobs(flow_run["result"], tmp_path)
    assert len(blobs) > 20  # the scan really saw params, tags and artifacts
    leaked = [(where, s) for s in secrets for where, blob in blobs.items() if s in blob]
    assert leaked == []


def test_no_document_text_in_prefect_logs(flow_run: dict) -> None:
    secrets = _secrets(flow_run["root"])
    APILogHandler().flush()  # logs are shipped in background batches
    messages: list[str] = []
    deadline = time.time() + 30
    while time.time() < deadline and not any("stage evaluate finished" in m for m in messages):
        messages = flow_run_logs(flow_run["flow_run_id"])
        time.sleep(0.5)
    assert any("ingest:" in m for m in messages) and any("stage evaluate finished" in m for m in messages)
    leaked = [s for s in secrets if any(s in m for m in messages)]
    assert leaked == []


def test_adhoc_privatize_and_evaluate_reuse_the_pipelines_models(flow_run: dict, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from textsift.cli import app

    root: Path = flow_run["root"]
    corpus = read_corpus(root / "data/ingest/corpus.parquet").head(30)
    source = tmp_path / "new.jsonl"
    corpus[["doc_id", "text", "label", "spans"]].to_json(source, orient="records", lines=True)
    runner = CliRunner()
    out = tmp_path / "new.private.csv"
    result = runner.invoke(app, ["privatize", "--input", str(source), "--setting", "mdp", "--output", str(out),
                                 "--params", str(root / "params.yaml"), "--root", str(root), "--id-field", "doc_id"])
    assert result.exit_code == 0, result.output
    private = pd.read_csv(out)
    assert list(private["doc_id"]) == list(corpus["doc_id"]) and list(private["label"]) == list(corpus["label"])
    metrics_file = tmp_path / "metrics.json"
    result = runner.invoke(app, ["evaluate", "--original", str(source), "--privatized", str(out), "--params",
                                 str(root / "params.yaml"), "--id-field", "doc_id", "--spans-field", "spans",
                                 "--output", str(metrics_file)])
    assert result.exit_code == 0, result.output
    import json

    metrics = json.loads(metrics_file.read_text())
    assert 0 < metrics["privacy.token_change_fraction"] <= 1 and 0 <= metrics["privacy.leak.rate"] <= 1
    assert "tfidf_logreg.original.accuracy" in metrics


def test_adhoc_privatize_rejects_an_unknown_setting_and_bad_input(flow_run: dict, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from textsift.cli import app

    root: Path = flow_run["root"]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "text": "caf\xe9", "label": "x"}\n')
    runner = CliRunner()
    common = ["--params", str(root / "params.yaml"), "--root", str(root), "--output", str(tmp_path / "o.csv")]
    result = runner.invoke(app, ["privatize", "--input", str(bad), "--setting", "nope", *common])
    assert result.exit_code == 2 and "no setting 'nope'" in result.output
    result = runner.invoke(app, ["privatize", "--input", str(bad), "--setting", "mdp", "--id-field", "id", *common])
    assert result.exit_code == 2 and "no usable records" in result.output


def test_corrupted_ingest_output_fails_the_next_stage_with_the_expectation_named(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    path = root / "data/ingest/corpus.parquet"
    corpus = read_corpus(path)
    corrupted = pd.concat([corpus, corpus.iloc[:3]], ignore_index=True)
    from textsift.corpus import corpus_table, write_table

    write_table(corpus_table(corrupted), path)
    with pytest.raises(QualityError, match=r"expect_column_values_to_be_unique.*doc_id"):
        run_stage("evaluate", root=root)


def test_the_flow_run_publishes_its_mlflow_run_and_frontier_as_a_prefect_artifact(flow_run: dict) -> None:
    artifact = Artifact.get(ARTIFACT_KEY)
    assert artifact is not None and artifact.flow_run_id == flow_run["flow_run_id"]
    assert flow_run["result"]["parent_run_id"] in artifact.data
    assert "| ds2 | datasifter |" in artifact.data  # a frontier row


def test_the_run_reports_where_its_time_went(flow_run: dict) -> None:
    """A table of seconds per stage instance: a Prefect table artifact, MLflow metrics on the parent run."""
    times = flow_run["result"]["times"]
    names = [row["stage"] for row in times]
    assert set(names[:-1]) == set(flow_run["result"]["metrics"]) and names[-1] == "(all stages)"
    seconds = [float(row["seconds"]) for row in times[:-1]]
    assert seconds == sorted(seconds, reverse=True) and seconds[0] > 0
    assert float(times[-1]["seconds"]) == pytest.approx(sum(seconds), abs=0.1 * len(seconds))
    artifact = Artifact.get(TIMES_KEY)
    assert artifact is not None and artifact.flow_run_id == flow_run["flow_run_id"] and "evaluate" in str(artifact.data)
    parent = MlflowClient(flow_run["result"]["tracking_uri"]).get_run(flow_run["result"]["parent_run_id"])
    assert "time_s.build_indexes.w2v" in parent.data.metrics
    assert parent.data.metrics["time_s.evaluate"] == pytest.approx(
        flow_run["result"]["metrics"]["evaluate"]["stage.wall_seconds"])


def _children(result: dict) -> dict[str, Any]:
    client = MlflowClient(result["tracking_uri"])
    runs = client.search_runs([result["experiment_id"]], f"tags.mlflow.parentRunId = '{result['parent_run_id']}'")
    return {r.data.tags["textsift.instance"]: r for r in runs if "textsift.instance" in r.data.tags}


def test_a_rerun_skips_unchanged_stages_rebuilds_damage_and_reruns_only_a_changed_setting(flow_run: dict) -> None:
    """Runs after the corrupted-ingest test above, whose damaged corpus the next run must repair."""
    from flows.pipeline import pipeline
    from textsift.promote import check_promoted, promote
    from textsift.tracking import Tracker

    root: Path = flow_run["root"]
    evaluate_before = (root / "metrics/evaluate.json").read_bytes()
    fill_in = read_pointer(root / FILL_IN_POINTER)  # the fill-in model deleted from the MLflow store and the cache
    gone = list((root / "mlartifacts").glob(f"**/artifacts/{fill_in['artifact_path']}"))
    assert gone
    for folder in (*gone, root / MODEL_CACHE / fill_in["sha256"]):
        shutil.rmtree(folder, ignore_errors=True)
    repaired = _children(pipeline(root=str(root)))
    ran = {name for name, run in repaired.items() if run.data.tags["textsift.cached"] == "false"}
    assert ran == {"key", "ingest", "train_fill_in"}  # ingest's output was damaged and the model was gone; both
    # rebuilt byte-identical, so nothing downstream re-runs (the key stage runs every time: it checks the key)
    assert read_pointer(root / FILL_IN_POINTER) == fill_in
    assert all(run.info.status == "FINISHED" for run in repaired.values())
    cached_eval = repaired["evaluate"].data.metrics
    assert cached_eval["original.tfidf_logreg.original.accuracy"] == pytest.approx(
        json.loads(evaluate_before)["original"]["tfidf_logreg"]["original"]["accuracy"])

    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["privatize"]["settings"]["mdp"]["epsilon"] = 30.0
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    changed = _children(pipeline(root=str(root)))
    assert {name for name, run in changed.items() if run.data.tags["textsift.cached"] == "false"} == {
        "key", "privatize@mdp", "outsider@mdp", "attack", "evaluate"}  # not the noisy embeddings' evaluation
    # red's outsider stage came from the cache, registering nothing: this run judged, and promote ships, the privatizer
    # an earlier run registered for the very corpus judged here
    rerun = changed["evaluate"].data.tags["mlflow.parentRunId"]
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    shipped = promote(tracker, "textsift-classifier", "red", rerun, "after a rerun", accept_failing=True, by="tester",
                      privatizer="textsift-privatizer")
    assert shipped.privatizer_version is not None
    version = MlflowClient(tracker.uri).get_model_version("textsift-privatizer", shipped.privatizer_version)
    assert version.tags["textsift.pipeline_run"] != rerun and version.tags["textsift.judged_in"] == rerun
    check_promoted(tracker, "models:/textsift-privatizer@recommended")
    # the noisy-embedding evaluation came from the cache, yet this run's parent has every setting's frontier run
    embedding_runs = MlflowClient(tracker.uri).search_runs(
        [changed["evaluate"].info.experiment_id],
        f"tags.mlflow.parentRunId = '{rerun}' and tags.`textsift.stage` = 'embedding_frontier'")
    assert {r.data.tags["textsift.setting"] for r in embedding_runs} == set(params["embedding_dp"]["settings"])


def test_detection_is_its_own_stage_with_confidences_and_provenance(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    rows = pd.read_parquet(root / "data/detected/spans.parquet")
    spans = [span for cell in rows["spans"] for span in cell]
    assert spans and set(rows.columns) == {"doc_id", "text_digest", "spans"}  # offsets, never text
    from textsift.detection.recognizers.base import Detection
    from textsift.detection.recognizers.merge import Thresholds
    from textsift.tracking import Tracker

    params = load_params(root / "params.yaml")
    folder = detector_folder(root, Tracker(params.tracking, root))
    calibrated = json.loads((folder / "detector.json").read_text(encoding="utf-8"))["thresholds"]
    needs = Thresholds(params.detection.threshold, params.detection.thresholds, calibrated)
    for span in spans:  # merged from several finders: it passed for the one that needs the least
        finders = span["source"].split("+")
        assert set(finders) <= set(params.detection.recognizers)
        needed = min(needs.of(Detection(0, 1, span["label"], span["score"], finder)) for finder in finders)
        assert needed <= span["score"] + 1e-6 <= 1 + 1e-6
    from textsift.detection.spans_file import read_detected, stored_spans

    corpus = pd.read_parquet(root / "data/ingest/corpus.parquet")
    resolved = stored_spans(read_detected(root / "data/detected/spans.parquet"), corpus["doc_id"].tolist(),
                            corpus["text"].tolist())  # every type asked for: one type per span
    metrics = json.loads((root / "metrics/detect.json").read_text(encoding="utf-8"))
    assert 0 < metrics["spans"] == sum(map(len, resolved)) <= len(spans)  # the file: every type a span passed for
    assert sum(v for k, v in metrics.items() if k.startswith("spans.by.")) >= metrics["spans"]


def test_every_mechanism_keeps_the_mechanism_contract(flow_run: dict) -> None:
    """One contract for every registered mechanism (textsift.mechanisms.base.Mechanism), on the flow's project:
    the stage's output is ``privatize`` under the setting's release key; the same key gives the same texts; a
    ``per_document`` mechanism's output does not depend on the batch or the row order; metrics are numbers.
    (Detector-driven protection is each mechanism's own test: test_redact, test_metric_dp_privatizer,
    test_datasifter_masking.)"""
    from textsift import secret_key
    from textsift.mechanisms.base import Documents
    from textsift.mechanisms.registry import MECHANISMS, mechanism
    from textsift.privatization.corpus import documents
    from textsift.privatization.resources import StageResources
    from textsift.registry import StageInstance, get_stage
    from textsift.releases import release_key
    from textsift.stage_context import StageContext
    from textsift.tracking import Tracker

    root: Path = flow_run["root"]
    params = load_params(root / "params.yaml")
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    docs = documents(corpus)
    secret = secret_key.ensure(root)  # the project's: the flow made its key on the first stage
    assert {s.kind for s in params.privatize.settings.values()} == set(MECHANISMS)  # every mechanism is covered
    for name, setting in params.privatize.settings.items():
        ctx = StageContext(root, params, StageInstance(get_stage("privatize"), name), Tracker(params.tracking, root),
                           "contract")
        implementation, resources = mechanism(setting.kind), StageResources(ctx)
        context = implementation.release_context(setting, resources)
        key = release_key(secret, setting.kind, name, setting, context=context)
        assert implementation.needs(setting) == setting.needs()
        result = implementation.privatize(docs, setting, resources, key)
        texts, metrics = result.texts, result.metrics
        published = read_corpus(root / f"data/privatized/{name}.parquet")
        assert texts == published["text"].tolist(), name  # the stage is the mechanism under the release key
        assert implementation.privatize(docs, setting, resources, key).texts == texts, name
        assert all(isinstance(v, int | float) for v in metrics.values()), name  # aggregates, never text
        if implementation.per_document:
            back = Documents(docs.texts[::-1], docs.ids[::-1], docs.gold[::-1])
            half = len(docs.texts) // 2
            first, second = (Documents(docs.texts[s], docs.ids[s], docs.gold[s])
                             for s in (slice(None, half), slice(half, None)))
            assert implementation.privatize(back, setting, resources, key).texts == texts[::-1], name
            assert (implementation.privatize(first, setting, resources, key).texts
                    + implementation.privatize(second, setting, resources, key).texts) == texts, name


def test_two_metric_dp_settings_draw_independent_noise(flow_run: dict) -> None:
    """``mdp`` and ``mdp_det`` share index and ε (``mdp_det`` also replaces detected words): from one shared draw they
    emitted the same word at nearly every position either changed; independent draws agree far less."""
    from textsift.tokenize import metric_dp_words

    root: Path = flow_run["root"]
    original, first, second = (read_corpus(root / f"data/{name}.parquet")["text"].tolist()
                               for name in ("ingest/corpus", "privatized/mdp", "privatized/mdp_det"))
    same = changed = 0
    for text, a, b in zip(original, first, second, strict=True):
        words = [[t.text for t in metric_dp_words(x)] for x in (text, a, b)]
        if len({len(w) for w in words}) == 1:  # positions line up
            pairs = [(x, y) for o, x, y in zip(*words, strict=True) if x != o or y != o]
            changed += len(pairs)
            same += sum(x == y for x, y in pairs)
    assert changed > 200
    assert same / changed < 0.3  # independent: ~0.04 here; one shared draw: nearly 1


def test_no_key_bytes_outside_the_key_file(flow_run: dict) -> None:
    """The secret key (hex or raw) is in no MLflow store or artifact, Prefect database or log, report, metric,
    manifest or DVC file of the run; runs and manifests carry only its fingerprint."""
    import os

    from textsift.secret_key import KEY_FILE, load

    root: Path = flow_run["root"]
    key = load(root)
    assert key is not None
    needles = (key.material, key.material.hex().encode(), key.material.hex().upper().encode())
    places = [p for p in root.rglob("*") if p.is_file() and p != root / KEY_FILE]
    places += [p for p in Path(os.environ["PREFECT_HOME"]).rglob("*") if p.is_file()]
    assert len(places) > 50
    leaks = [str(p) for p in places if any(n in p.read_bytes() for n in needles)]
    assert leaks == []
    manifest = json.loads(next((root / "data/embeddings").glob("*.manifest.json")).read_text(encoding="utf-8"))
    assert manifest["key_fingerprint"] == key.fingerprint and "seed" not in manifest
    runs = _children(flow_run["result"])
    assert {run.data.tags.get("textsift.key_fingerprint") for name, run in runs.items()
            if name.startswith(("privatize@", "outsider@", "embedding_dp@"))} == {key.fingerprint}


def test_the_pseudonym_vault_is_sealed_apart_from_the_published_corpus(flow_run: dict) -> None:
    """``vault: true`` keeps original -> pseudonym for ``textsift reveal``; the published corpus holds neither the
    vault nor the originals it names, and only the key opens it."""
    from typer.testing import CliRunner

    from textsift.cli import app
    from textsift.secret_key import load
    from textsift.vault import unseal

    root: Path = flow_run["root"]
    entries = unseal((root / "data/vault/red.bin").read_bytes(), "red", load(root))
    assert entries and all(e for e in entries.values())
    published = read_corpus(root / "data/privatized/red.parquet").set_index("doc_id")["text"]
    for doc_id, doc_entries in entries.items():
        # the key draws the pseudonyms: another person's stand-in may hold an original's word ("Lee" for "Ann
        # Lee"), so the originals are looked for, as words, in what the stand-ins leave
        rest = published[doc_id]
        for _, stand_in, _ in sorted(doc_entries, key=lambda e: -len(e[1])):
            assert stand_in in published[doc_id]
            rest = rest.replace(stand_in, " ")
        for _, _, original in doc_entries:
            assert not re.search(rf"\b{re.escape(original)}\b", rest)
    blob = (root / "data/vault/red.bin").read_bytes()
    assert blob[40:72] not in (root / "data/privatized/red.parquet").read_bytes()
    assert unseal((root / "data/vault/mdp.bin").read_bytes(), "mdp", load(root)) == {}  # no vault asked
    doc_id, (label, stand_in, original) = next((d, e[0]) for d, e in entries.items())
    shown = CliRunner().invoke(app, ["reveal", "--setting", "red", "--pseudonym", stand_in, "--doc-id", doc_id,
                                     "--root", str(root)])
    assert shown.exit_code == 0 and json.loads(shown.stdout.splitlines()[0])["original"] == original


def test_every_setting_has_a_ledger_of_what_each_document_spent(flow_run: dict) -> None:
    root: Path = flow_run["root"]
    params = load_params(root / "params.yaml")
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    for name, setting in params.privatize.settings.items():
        ledger = pd.read_parquet(root / f"data/ledger/{name}.parquet")
        assert ledger["doc_id"].tolist() == corpus["doc_id"].astype(str).tolist(), name
        metrics = json.loads((root / f"metrics/privatize/{name}.json").read_text(encoding="utf-8"))
        if setting.kind == "metric_dp":  # n perturbed words x epsilon, and the distribution in the metrics
            assert (ledger["epsilon"] > 0).all() and (ledger["epsilon"] % setting.epsilon < 1e-6).all(), name
            assert metrics["ledger.epsilon_max"] == pytest.approx(ledger["epsilon"].max())
        else:
            assert ledger["epsilon"].isna().all() and metrics["ledger.dp"] == 0.0, name
    html = (root / "reports/evaluate/report.html").read_text(encoding="utf-8")
    assert "Privacy spent per document" in html and "all DP releases" in html  # every release, composed


def _adhoc_privatized(flow_run: dict, tmp_path: Path, setting: str, corpus: pd.DataFrame) -> list[str]:
    """What `textsift privatize` writes for these ids and texts (a file without spans) in the flow's project."""
    from typer.testing import CliRunner

    from textsift.cli import app

    source, out = tmp_path / f"{setting}.in.jsonl", tmp_path / f"{setting}.out.jsonl"
    tmp_path.mkdir(parents=True, exist_ok=True)
    corpus[["doc_id", "text", "label"]].to_json(source, orient="records", lines=True)
    root = flow_run["root"]
    result = CliRunner().invoke(app, ["privatize", "--input", str(source), "--setting", setting, "--output", str(out),
                                      "--root", str(root), "--id-field", "doc_id"])
    assert result.exit_code == 0, result.output
    return pd.read_json(out, lines=True).set_index("doc_id").loc[list(corpus["doc_id"]), "text"].tolist()


def _latest_privatizer(flow_run: dict, setting: str) -> dict[str, Any]:
    from textsift.config import load_params
    from textsift.tracking import Tracker

    tracker = Tracker(load_params(flow_run["root"] / "params.yaml").tracking, flow_run["root"])
    return tracker.latest_version("textsift-privatizer", setting)


def test_each_served_setting_is_a_registered_privatizer_that_never_repeats_a_published_draw(
        flow_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``models:/textsift-privatizer/...`` redacts what `textsift privatize` redacts, but with stand-ins of its own:
    the same ids and texts never give the published stand-ins, and each call is a fresh draw."""
    import mlflow.pyfunc

    from textsift import secret_key
    from textsift.corpus import read_corpus
    from textsift.errors import ConfigError

    root, result = flow_run["root"], flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    # DataSifterText calibrates over a corpus; a word2vec index holds the corpus's own words: neither is shipped
    assert {v.tags["textsift.setting"] for v in client.search_model_versions("name = 'textsift-privatizer'")} == {
        "red", "mdp_pub"}
    corpus = read_corpus(root / "data/ingest/corpus.parquet").head(25)
    expected = _adhoc_privatized(flow_run, tmp_path, "red", corpus)
    local = client.download_artifacts(_latest_privatizer(flow_run, "red")["run_id"], "privatizer", str(tmp_path / "m"))
    monkeypatch.delenv(secret_key.ENV, raising=False)
    with pytest.raises(ConfigError, match="no secret key"):  # the key is never packed with the model
        mlflow.pyfunc.load_model(local)
    monkeypatch.setenv(secret_key.ENV, (root / secret_key.KEY_FILE).read_text().strip())
    model = mlflow.pyfunc.load_model(local)
    assert model.metadata.get_input_schema().input_names() == ["id", "text", "entities", "threshold", "operators"]
    assert "replaced" in model.metadata.get_output_schema().input_names()
    request = pd.DataFrame({"id": corpus["doc_id"], "text": corpus["text"]})
    out, again = list(model.predict(request)["text"]), list(model.predict(request)["text"])
    replaced = [i for i, (text, private) in enumerate(zip(corpus["text"], expected, strict=True)) if text != private]
    assert len(replaced) >= 5
    assert all(out[i] != corpus["text"].iloc[i] for i in replaced)  # what the file's run redacts, it redacts
    assert not [i for i in replaced if out[i] == expected[i] or out[i] == again[i]]  # never the published draws
    packed = Path(local) / "artifacts"
    assert not [f for f in packed.rglob("*") if f.is_file() and any(
        t in f.read_bytes().decode("utf-8", "ignore") for t in corpus["text"])]  # no document inside the model


def test_metric_dp_over_a_public_vocabulary_is_served_with_fresh_noise_and_nothing_of_the_corpus(
        flow_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mdp_pub``'s index is GloVe's most frequent words, chosen without reading the corpus: its registered model
    packs exactly those words (a corpus-filtered list would tell which public words the corpus's names are), answers
    with noise of its own (never a published draw), writes nothing but words of that vocabulary where it changes one,
    and holds no document."""
    import mlflow.pyfunc

    from textsift import secret_key
    from textsift.embeddings.glove import public_glove
    from textsift.tokenize import metric_dp_words

    root, result = flow_run["root"], flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    local = client.download_artifacts(_latest_privatizer(flow_run, "mdp_pub")["run_id"], "privatizer",
                                      str(tmp_path / "m"))
    packed = Path(local) / "artifacts"
    vocabulary = next(packed.rglob("vocab.txt")).read_text(encoding="utf-8").split("\n")[:-1]
    assert vocabulary == public_glove(3000).words  # the published table's alone, whatever the corpus
    monkeypatch.setenv(secret_key.ENV, (root / secret_key.KEY_FILE).read_text().strip())
    model = mlflow.pyfunc.load_model(local)
    corpus = read_corpus(root / "data/ingest/corpus.parquet").head(25)
    published = read_corpus(root / "data/privatized/mdp_pub.parquet").set_index("doc_id")["text"]
    answer = model.predict(pd.DataFrame({"id": corpus["doc_id"], "text": corpus["text"]}))
    served = answer["text"].tolist()
    assert not [d for d, s in zip(corpus["doc_id"], served, strict=True) if s == published[d]]
    allowed = set(vocabulary) | {"[oov]"}
    new_words = [{t.text.lower() for t in metric_dp_words(s)} - {t.text.lower() for t in metric_dp_words(text)}
                 for text, s in zip(corpus["text"], served, strict=True)]
    assert sum(map(len, new_words)) > 100 and set().union(*new_words) <= allowed
    assert (answer["epsilon"] > 0).all()  # each answer's n * epsilon: two answers for one text compose
    assert not [f for f in packed.rglob("*") if f.is_file() and any(
        t in f.read_bytes().decode("utf-8", "ignore") for t in corpus["text"])]  # no document inside the model


def _oracle_probes(root: Path, docs: int) -> tuple[pd.DataFrame, list[str], pd.Series]:
    """The re-identification oracle's probes: for the first ``docs`` published documents whose gold person names
    were replaced, one record "My name is <candidate>." under the document's id per candidate (every such name of
    those documents); the candidates, and the published texts by id."""
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    published = read_corpus(root / "data/privatized/red.parquet").set_index("doc_id")["text"]
    owners: dict[str, set[str]] = {}
    for doc_id, text, spans in zip(corpus["doc_id"], corpus["text"], corpus["spans"], strict=True):
        names = {text[s["start"]:s["end"]] for s in spans if s["label"] == "PERSON"}
        names = {n for n in names if n not in published[doc_id]}  # replaced in the published document
        if names and len(owners) < docs:
            owners[doc_id] = names
    candidates = sorted({n for names in owners.values() for n in names})
    probes = pd.DataFrame([(d, c, c in owners[d]) for d in owners for c in candidates],
                          columns=["doc_id", "candidate", "true"])
    return probes, candidates, published


def _confirmed(probes: pd.DataFrame, answers: list[str], published: pd.Series) -> pd.Series:
    """Per probe, whether its answer's stand-in (the text around the template, when it replaced the candidate) is in
    the published document of the probe's id: the oracle "confirms" that candidate for that document."""
    stand_ins = [re.sub(r"^My name is (.*?)\.( Case \d+\.)?$", r"\1", a) for a in answers]
    return pd.Series([s != c and s in published[d] for s, c, d in
                      zip(stand_ins, probes["candidate"], probes["doc_id"], strict=True)])


def test_textsift_privatize_is_no_oracle_for_published_pseudonyms(flow_run: dict, tmp_path: Path) -> None:
    """With the project's key, `textsift privatize` of probe texts under published ids confirms no published name:
    a document draws by its id and its text (textsift.releases), so only the published text repeats its stand-ins.
    (Under draws keyed by id alone every true name was confirmed.)"""
    root = flow_run["root"]
    probes, candidates, published = _oracle_probes(root, 6)
    assert probes["true"].sum() >= 6
    answers = pd.Series("", index=probes.index)
    for number, candidate in enumerate(candidates):  # ids are unique per file: one file per candidate
        rows = probes[probes["candidate"] == candidate]
        texts = _adhoc_privatized(flow_run, tmp_path / str(number), "red", pd.DataFrame(  # texts unique per file
            {"doc_id": rows["doc_id"], "text": [f"My name is {candidate}. Case {i}." for i in range(len(rows))],
             "label": "x"}))
        answers[rows.index] = texts
    confirmed = _confirmed(probes, answers.tolist(), published)
    assert confirmed[probes["true"]].mean() <= 0.01 and confirmed.sum() <= 1


def _fresh_virtualenv(folder: Path, requirements: Path) -> Path:
    """A virtualenv at ``folder`` holding only ``requirements``, installed offline (``UV_OFFLINE``): by uv, from the
    machine's local wheels (``PIP_FIND_LINKS`` or pip's ``find-links``, where a CPU torch is kept, as ``make setup``
    reads them) and the packages ``make setup`` put in uv's cache; no package index is asked, so nothing that is not
    pinned can slip in. Its ``bin`` folder."""
    import subprocess
    import sys

    bin_folder = Path(sys.executable).parent
    pip_config = [sys.executable, "-m", "pip", "config", "get", "global.find-links"]
    links = (os.environ.get("PIP_FIND_LINKS", "").split()
             or subprocess.run(pip_config, capture_output=True, text=True).stdout.split())
    env = {**os.environ, "UV_OFFLINE": "1"}
    subprocess.run([bin_folder / "uv", "venv", "-q", "--python", sys.executable, folder], check=True, env=env,
                   timeout=60)
    installed = subprocess.run([bin_folder / "uv", "pip", "install", "-q", "--no-deps", "--python",
                                folder / "bin" / "python", *(f"--find-links={link}" for link in links), "-r",
                                requirements], env=env, timeout=180, capture_output=True, text=True)
    assert installed.returncode == 0, ("the model's pins did not install offline from uv's cache (make setup fills "
                                       f"it) and the local wheels {links}: {installed.stderr[-2000:]}")
    return folder / "bin"


def test_the_registered_privatizer_is_served_by_mlflow_from_a_fresh_virtualenv_that_never_saw_textsift(
        flow_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No package index has textsift: the registered model packs textsift's code (MLflow ``code_paths``) and requires
    what that code imports of textsift's requirements, pinned. ``mlflow models serve`` from a virtualenv holding only
    those pins, installed offline, serves it from the registry and answers what the model answers in the project."""
    import signal
    import socket
    import subprocess

    import httpx
    import mlflow.pyfunc
    from packaging.requirements import Requirement

    from textsift import secret_key
    from textsift.serving.packing import served_modules
    from textsift.tracking import Tracker, pinned_requirements

    root = flow_run["root"]
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    version = _latest_privatizer(flow_run, "red")
    uri = f"models:/textsift-privatizer/{version['version']}"
    folder = tracker.download_model(uri, tmp_path / "model")
    requirements = [r for r in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines() if r.strip()]
    assert not [r for r in requirements if r.startswith("textsift")]
    def normal(lines: Iterable[str]) -> set[str]:
        return {str(Requirement(line)) for line in lines}

    # what it runs and all it needs, each pinned; a platform's dependency keeps its marker
    params = load_params(root / "params.yaml")
    assert normal(pinned_requirements(served_modules(params.privatize.settings["red"], params))) <= normal(requirements)
    assert [r for r in requirements if r.startswith("greenlet") and "platform_machine" in r]
    assert all("==" in r for r in requirements) and "torch" in {r.split("==")[0] for r in requirements}
    assert not {r.split("==")[0] for r in requirements} & {"dvc", "prefect", "great-expectations", "prefect-dask"}
    venv = _fresh_virtualenv(tmp_path / "venv", folder / "requirements.txt")

    key = (root / secret_key.KEY_FILE).read_text().strip()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # only the virtualenv's programs: MLflow starts uvicorn by name, which must not be the project's
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PATH")}
    env.update({secret_key.ENV: key, "PATH": f"{venv}{os.pathsep}/usr/bin{os.pathsep}/bin",
                "MLFLOW_TRACKING_URI": tracker.uri})
    for absent in ("textsift", "prefect"):
        found = subprocess.run([venv / "python", "-c", f"import importlib.util; print(importlib.util.find_spec("
                                f"{absent!r}) is None)"], env=env, capture_output=True, text=True, cwd=tmp_path)
        assert found.stdout.strip() == "True", (absent, found.stderr[-500:])
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        server = subprocess.Popen([venv / "mlflow", "models", "serve", "-m", uri, "--env-manager", "local",
                                   "--host", "127.0.0.1", "--port", str(port)], cwd=tmp_path, env=env,
                                  stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    texts = list(read_corpus(root / "data/ingest/corpus.parquet").head(12)["text"])
    try:
        deadline, answer = time.monotonic() + 150, None
        while answer is None and time.monotonic() < deadline and server.poll() is None:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/invocations", timeout=60,
                                    json={"dataframe_split": {"columns": ["text"], "data": [[t] for t in texts]}})
            except httpx.TransportError:
                time.sleep(0.5)
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # the server and the uvicorn it started
        server.wait(timeout=30)
    assert answer is not None and answer.status_code == 200, log.read_text()[-3000:]
    served = answer.json()["predictions"]
    monkeypatch.setenv(secret_key.ENV, key)
    here = mlflow.pyfunc.load_model(str(folder)).predict(pd.DataFrame({"text": texts})).to_dict("records")
    # every row draws fresh stand-ins (no request replays a release), so the answers agree on everything else: the
    # same bytes outside the stand-ins, the same types replaced, in the same order; and something was replaced
    assert [_kept(row) for row in served] == [_kept(row) for row in here] and any(row["replaced"] for row in here)
    assert [[r["type"] for r in row["replaced"]] for row in served] == [[r["type"] for r in row["replaced"]]
                                                                         for row in here]


def _kept(row: dict[str, Any]) -> list[str]:
    """The pieces of an answer's text between its stand-ins (``replaced``: where each lies in the answer)."""
    text, cuts = row["text"], sorted((r["start"], r["end"]) for r in row["replaced"])
    starts, ends = [0, *(end for _, end in cuts)], [*(start for start, _ in cuts), len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def test_textsift_serve_answers_real_http_requests_and_is_no_oracle_and_no_text_in_errors(
        flow_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import threading
    import time

    import httpx
    import uvicorn

    from textsift import secret_key
    from textsift.config import load_params
    from textsift.corpus import read_corpus
    from textsift.detection.types import ENTITY_TYPES
    from textsift.serving.app import create_app
    from textsift.serving.model import load_privatizer
    from textsift.tracking import Tracker

    root = flow_run["root"]
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    version = _latest_privatizer(flow_run, "red")
    folder = tracker.download_model(f"models:/textsift-privatizer/{version['version']}", tmp_path / "model")
    monkeypatch.setenv(secret_key.ENV, (root / secret_key.KEY_FILE).read_text().strip())
    model, setting = load_privatizer(folder)
    token = "t" * 32
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    audit = tmp_path / "audit.jsonl"
    assert "entities" in model.metadata.get_input_schema().input_names()  # MLflow drops undeclared columns
    app = create_app(model, token, setting, "fp", max_bytes=64_000, rate_limit=600, audit=audit,
                     analyzer=model.unwrap_python_model().analyze)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
        corpus = read_corpus(root / "data/ingest/corpus.parquet").head(12)
        records = [{"id": i, "text": t} for i, t in zip(corpus["doc_id"], corpus["text"], strict=True)]
        answer = httpx.post(f"{url}/privatize", json={"records": records}, headers=auth, timeout=60)
        assert answer.status_code == 200
        served = [r["text"] for r in answer.json()["records"]]
        assert [r["id"] for r in answer.json()["records"]] == list(corpus["doc_id"])
        replaced = [r["replaced"] for r in answer.json()["records"]]  # where each stand-in lies in the answer
        assert [bool(r) for r in replaced] == [s != t for s, t in zip(served, corpus["text"], strict=True)]
        assert all(set(e) == {"start", "end", "type"} and 0 <= e["start"] < e["end"] <= len(s)
                   for spans, s in zip(replaced, served, strict=True) for e in spans)
        published = _adhoc_privatized(flow_run, tmp_path, "red", corpus)
        assert [s != t for s, t in zip(served, corpus["text"], strict=True)] == [
            p != t for p, t in zip(published, corpus["text"], strict=True)]  # it redacts what the file's run does
        # a served draw equals the published one only by chance (two Faker cities agree with p ~ 1.3e-4); a service
        # that reused the release's draws would repeat every replaced document
        replaced_docs = [(s, p) for s, p, t in zip(served, published, corpus["text"], strict=True) if p != t]
        assert len(replaced_docs) >= 4 and sum(s == p for s, p in replaced_docs) <= 1
        ndjson = "".join(json.dumps(r) + "\n" for r in records).encode()  # the same records as an NDJSON stream
        streamed = httpx.post(f"{url}/privatize/stream", content=ndjson, headers=auth, timeout=60)
        answers = [json.loads(line) for line in streamed.text.splitlines()]
        assert streamed.status_code == 200 and [a["id"] for a in answers] == list(corpus["doc_id"])
        assert [a["text"] != t for a, t in zip(answers, corpus["text"], strict=True)] == [
            s != t for s, t in zip(served, corpus["text"], strict=True)]
        analyzed = httpx.post(f"{url}/analyze", json={"records": records}, headers=auth, timeout=60)
        assert analyzed.status_code == 200
        found = [r["entities"] for r in analyzed.json()["records"]]  # what /privatize replaced, where, of what type
        assert [bool(f) for f in found] == [s != t for s, t in zip(served, corpus["text"], strict=True)]
        for entities, text in zip(found, corpus["text"], strict=True):
            assert all(set(e) == {"start", "end", "type"} and text[e["start"]:e["end"]].strip() for e in entities)
        # a request may name the types to protect, as long as they hold the setting's own (red: all of them)
        wide = {"records": records, "entities": ["direct", "quasi"]}
        wider = httpx.post(f"{url}/analyze", json=wide, headers=auth, timeout=60).json()["records"]
        assert [w["entities"] for w in wider] == found
        wider_served = httpx.post(f"{url}/privatize", json=wide, headers=auth, timeout=60).json()["records"]
        assert [bool(w["entities"]) for w in wider] == [r["text"] != t for r, t in zip(wider_served, corpus["text"],
                                                                                         strict=True)]
        # what replaces each type: a request may ask for an operator no more revealing than the setting's pseudonyms
        tags = {label: "placeholder" for label in ENTITY_TYPES}
        tagged = httpx.post(f"{url}/privatize", json={**wide, "operators": tags}, headers=auth,
                            timeout=60).json()["records"]  # every type protected, each by its tag
        assert [bool(r["replaced"]) for r in tagged] == [bool(w["replaced"]) for w in wider_served] and any(
            r["replaced"] for r in tagged)
        assert all(r["text"][e["start"]:e["end"]] == f"[{e['type']}]" for r in tagged for e in r["replaced"])
        masked = httpx.post(f"{url}/privatize", json={"records": records, "operators": {"PERSON": "mask"}},
                            headers=auth, timeout=60)  # a mask gives each word's length away: never asked of this one
        assert masked.status_code == 422 and "mask reveals what the served setting's pseudonym does not" in masked.text
        narrower = httpx.post(f"{url}/privatize", json={"records": records, "entities": ["direct"]}, headers=auth,
                              timeout=60)  # what was judged protects every type: a request may not drop some
        assert narrower.status_code == 422 and "never leave one out (missing: LOC" in narrower.json()["error"]
        # the oracle: "My name is <candidate>." under a published document's id, every candidate for every document
        probes, _, by_id = _oracle_probes(root, 12)
        assert probes["true"].sum() >= 10
        asked = [{"id": d, "text": f"My name is {c}."} for d, c in zip(probes["doc_id"], probes["candidate"],
                                                                       strict=True)]
        answers = []
        for start in range(0, len(asked), 200):
            reply = httpx.post(f"{url}/privatize", json={"records": asked[start:start + 200]}, headers=auth,
                               timeout=120)
            assert reply.status_code == 200, reply.text
            answers += [r["text"] for r in reply.json()["records"]]
        confirmed = _confirmed(probes, answers, by_id)
        assert confirmed[probes["true"]].mean() <= 0.01 and confirmed.sum() <= 1  # was every true name
        reported = json.loads((root / "metrics/outsider/red.json").read_text(encoding="utf-8"))
        assert reported["attack.oracle.probes"] >= 100 and reported["attack.oracle.confirmed"] <= 0.01  # the stage's
        limited = httpx.post(f"{url}/privatize", json={"records": [{"text": "x y"}] * 600}, headers=auth, timeout=30)
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
        secret_text = "Maria Lopez lives at 12 Elm Street"
        refused = {
            401: httpx.post(f"{url}/privatize", json={"records": [{"text": secret_text}]}, timeout=30),
            413: httpx.post(f"{url}/privatize", json={"records": [{"text": secret_text * 2000}]}, headers=auth,
                            timeout=30),
            400: httpx.post(f"{url}/privatize", content=b"{" + secret_text.encode(), headers=auth, timeout=30),
            422: httpx.post(f"{url}/privatize", json={"records": [{"txt": secret_text}]}, headers=auth, timeout=30),
        }
        for status, response in refused.items():
            assert response.status_code == status and "Maria" not in response.text, (status, response.text)
        assert httpx.get(f"{url}/health", timeout=30).json() == {"status": "ok", "setting": "red",
                                                                  "key_fingerprint": "fp"}
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
        # the records of /privatize, the stream, /analyze, the two wide requests and the tagged one, then the oracle's
        assert f"textsift_documents_total {6 * len(records) + len(asked)}" in metrics
        assert 'textsift_requests_total{status="401"} 1' in metrics
        lines = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
        assert [line["status"] for line in lines].count(200) == 6 + len(range(0, len(asked), 200))
        assert {line["status"] for line in lines} >= {200, 401, 413, 429} and "Maria" not in audit.read_text()
        assert token not in audit.read_text() and not any(str(d) in audit.read_text() for d in corpus["doc_id"])
    finally:
        server.should_exit = True
        thread.join(timeout=30)
