"""The frontier across every privatized setting, its MLflow runs, and the HTML report."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from textsift.config import load_params
from textsift.corpus import read_corpus

pytestmark = pytest.mark.integration


def test_frontier_table_has_every_setting_with_flags(flow_run: dict) -> None:
    table = pd.read_csv(flow_run["root"] / "reports/evaluate/frontier.csv")
    assert set(table["setting"]) == {"original", "ds", "ds2", "mdp", "mdp_det", "red"}
    assert set(table["mechanism"]) == {"none", "datasifter", "metric_dp", "redact"}
    assert table["pareto"].any()
    assert table["leak_rate"].between(0, 1).all()
    original = table.set_index("setting").loc["original"]
    assert original["utility_drop"] == 0 and original["leak_rate"] == 1 and original["interest_leak"] == 1
    assert table["interest_accuracy"].between(0, 1).all()  # the demo plants interests: every row is scored
    utility = pd.read_csv(flow_run["root"] / "reports/evaluate/utility.csv")
    assert set(utility["classifier"]) == {"tfidf_logreg", "transformer"}
    assert set(utility[utility["setting"] == "ds"]["test_on"]) == {"privatized", "original"}


def test_every_setting_run_has_the_same_metric_names(flow_run: dict) -> None:
    result = flow_run["result"]
    client = MlflowClient(result["tracking_uri"])
    runs = client.search_runs([result["experiment_id"]], "tags.`textsift.stage` = 'frontier'")
    by_setting = {r.data.tags["textsift.setting"]: r for r in runs}
    assert set(by_setting) == {"original", "ds", "ds2", "mdp", "mdp_det", "red"}
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
    assert all(f"| {key} |" in description for key in ("ds", "ds2", "mdp", "mdp_det", "red"))
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
    filled = [name for name, kind in kinds.items() if kind != "redact"]  # redaction's stand-ins come from Faker
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
