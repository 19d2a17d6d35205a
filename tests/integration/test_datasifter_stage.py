"""train_fill_in and privatize@<datasifter setting> on the tiny demo corpus, real MLflow sqlite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.integration.conftest import make_project
from textsift import user_cache
from textsift.artifacts import SHA_TAG, read_pointer
from textsift.config import TrackingParams
from textsift.corpus import read_corpus
from textsift.runner import run_stage
from textsift.tracking import resolve_uri

pytestmark = pytest.mark.integration
FILL_IN = {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "intermediate_size": 64, "vocab_size": 500,
           "max_length": 64, "epochs": 1, "batch_size": 16}
SETTING = {"kind": "datasifter", "whitelist_spans": True, "replacement": "rake_keyphrase", "k_clusters": 4,
           "fill_order": "parallel"}


def test_train_fill_in_then_privatize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, user_cache.OFF)  # trained twice below, not taken from the per-user cache
    overrides = {f"fill_in__{k}": v for k, v in FILL_IN.items()}
    root = make_project(tmp_path / "p", privatize__settings={"ds": SETTING}, **overrides)
    run_stage("ingest", root=root)
    trained = run_stage("train_fill_in", root=root)
    pointer = read_pointer(root / "models/fill_in.json")
    assert pointer["name"] == "fill_in" and len(pointer["sha256"]) == 64
    assert trained["validation.perplexity"] > 1 and trained["train.steps"] >= 1
    assert json.loads((root / "metrics/train_fill_in.json").read_text())["vocab_size"] <= 500

    client = MlflowClient(resolve_uri(TrackingParams(), root))
    run = client.search_runs([client.get_experiment_by_name("textsift").experiment_id],
                             "attributes.run_name = 'train_fill_in'")[0]
    assert run.data.tags[SHA_TAG] == pointer["sha256"]
    history = client.get_metric_history(run.info.run_id, "train.step_loss")
    assert sorted(m.step for m in history) == list(range(1, int(trained["train.steps"]) + 1))
    assert {a.path for a in client.list_artifacts(run.info.run_id, "fill_in")} >= {"fill_in/MLmodel", "fill_in/model"}

    metrics = run_stage("privatize", root=root, key="ds")
    original = read_corpus(root / "data/ingest/corpus.parquet")
    output = read_corpus(root / "data/privatized/ds.parquet")
    assert output["doc_id"].tolist() == original["doc_id"].tolist()
    assert output["label"].tolist() == original["label"].tolist()
    assert not output["text"].str.contains(r"\[MASK\]|##", regex=True).any()
    assert metrics["datasifter.masked_fraction_mean"] > 0.5
    assert metrics["datasifter.replaced_docs_fraction"] > 0.5
    assert metrics["privacy.token_change_fraction"] > 0.3
    below = json.loads((root / "metrics/privatize/ds.json").read_text())["datasifter.docs_below_target"]
    assert below == metrics["datasifter.docs_below_target"] < len(original)  # written as logged; most reach it

    run_stage("train_fill_in", root=root)  # deterministic training: the same model, the same pointer
    assert read_pointer(root / "models/fill_in.json")["sha256"] == pointer["sha256"]
