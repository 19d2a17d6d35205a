"""Models trained on nobody's data are trained once per user: the interest model, the detector's pretraining on the
corpus-independent sources (each project then trains it on its own corpus), and on the generated demo corpus the
detector and the fill-in model. A second project reuses the first one's; a damaged entry is never used (another
recipe is another entry: ``tests/unit/test_user_cache.py``); a model trained on a corpus read from a file never goes
to the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import make_project
from textsift import user_cache
from textsift.config import load_params
from textsift.runner import run_stage
from textsift.tracking import Tracker

pytestmark = pytest.mark.integration
TINY = {"detectors__data__synthetic_docs": 40, "detectors__pretrain__enabled": True}
TINY_DEMO = {"detectors__data__synthetic_docs": 40}


def _train(root: Path, detector: bool = True) -> tuple[dict[str, float], dict, dict[str, str]]:
    """A project's trainings (the detector's unless ``detector`` is False: the interest model reads no corpus): the
    metrics and run tags of train_detectors and train_interests, and the interest model's pointer."""
    stages = ("train_detectors", "train_interests") if detector else ("train_interests",)
    if detector:
        run_stage("ingest", root=root)
    metrics = {k: v for stage in stages for k, v in run_stage(stage, root=root).items()}
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    tags: dict[str, str] = {}
    for stage in stages:
        run_id = tracker.find_run("textsift.stage", stage)
        assert run_id is not None
        tags.update({k: v for k, v in tracker.run_tags(run_id).items() if "cached" in k})
    pointer = json.loads((root / "models" / "interests.json").read_text(encoding="utf-8"))
    return metrics, pointer, tags


def _detector_sha(root: Path) -> str:
    return json.loads((root / "models" / "detector.json").read_text(encoding="utf-8"))["sha256"]


def test_a_second_project_reuses_the_interest_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    first = _train(make_project(tmp_path / "one", **TINY))
    second = _train(make_project(tmp_path / "two", **TINY, ingest__demo__n_docs=150))  # another corpus
    assert first[2]["textsift.interests.cached"] == "false"
    assert second[2]["textsift.interests.cached"] == "true"
    assert (first[2]["textsift.detector.pretrained_cached"], second[2]["textsift.detector.pretrained_cached"]) == (
        "false", "true")
    assert first[0]["pretrain.train_seconds"] == second[0]["pretrain.train_seconds"]  # measured once, when trained
    assert _detector_sha(tmp_path / "one") != _detector_sha(tmp_path / "two")  # then trained on each corpus
    assert second[1]["sha256"] == first[1]["sha256"]  # the same model
    interest = {k: v for k, v in first[0].items() if k.startswith("interests.")}
    assert interest and {k: second[0][k] for k in interest} == interest  # its held-out figures come with it
    (entry,) = (tmp_path / "cache" / "models" / "interests").glob("[0-9a-f]*")
    weights = entry / user_cache.MODEL / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + b"\0" * 8)  # damaged on disk: verified, rebuilt
    third = _train(make_project(tmp_path / "three", **TINY), detector=False)
    assert third[2]["textsift.interests.cached"] == "false"
    assert third[1]["sha256"] == first[1]["sha256"]  # training is deterministic: the same bytes again


def _stage_tags(root: Path, stage: str) -> tuple[dict[str, str], list[float]]:
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    run_id = tracker.find_run("textsift.stage", stage)
    assert run_id is not None
    history = tracker.client.get_metric_history(run_id, "train.epoch_loss" if stage == "train_detectors"
                                                else "train.step_loss")
    return tracker.run_tags(run_id), [m.value for m in sorted(history, key=lambda m: m.step)]


def _models(root: Path) -> dict[str, object]:
    run_stage("ingest", root=root)
    run_stage("train_fill_in", root=root)
    run_stage("train_detectors", root=root)
    return {"pointers": [json.loads((root / "models" / f"{m}.json").read_text(encoding="utf-8"))["sha256"]
                         for m in ("fill_in", "detector")],
            "metrics": [json.loads((root / "metrics" / f"{s}.json").read_text(encoding="utf-8"))
                        for s in ("train_fill_in", "train_detectors")],
            "fill_in": _stage_tags(root, "train_fill_in"), "detector": _stage_tags(root, "train_detectors")}


def test_a_fresh_clone_reuses_the_models_trained_on_the_demo_corpus(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    first = _models(make_project(tmp_path / "one", **TINY_DEMO))
    clone = _models(make_project(tmp_path / "two", **TINY_DEMO))  # another folder and key: the same demo corpus
    assert [first[m][0][f"textsift.{m}.cached"] for m in ("fill_in", "detector")] == ["false", "false"]
    assert [clone[m][0][f"textsift.{m}.cached"] for m in ("fill_in", "detector")] == ["true", "true"]
    assert clone["pointers"] == first["pointers"] and clone["metrics"] == first["metrics"]
    assert clone["fill_in"][1] == first["fill_in"][1] and clone["detector"][1] == first["detector"][1]
    assert first["fill_in"][1] and first["detector"][1]  # the losses measured in training, logged again
    other = _models(make_project(tmp_path / "three", **TINY_DEMO, ingest__demo__n_docs=100))  # another corpus
    assert other["fill_in"][0]["textsift.fill_in.cached"] == "false"
    assert other["detector"][0]["textsift.detector.cached"] == "false"


def test_models_trained_on_a_users_corpus_stay_in_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    demo = make_project(tmp_path / "demo", **TINY_DEMO)
    run_stage("ingest", root=demo)
    corpus = pd.read_parquet(demo / "data" / "ingest" / "corpus.parquet")
    root = make_project(tmp_path / "user", **TINY_DEMO, ingest__source={"kind": "file", "path": "notes.jsonl"},
                        detectors__data__corpus_spans=False)
    corpus[["text", "label"]].to_json(root / "notes.jsonl", orient="records", lines=True)
    trained = _models(root)
    assert trained["fill_in"][0]["textsift.fill_in.cached"] == "false"
    assert trained["detector"][0]["textsift.detector.cached"] == "false"
    run_stage("train_interests", root=root)
    cached = {p.parent.name for p in (tmp_path / "cache" / "models").glob("*/*") if p.is_dir()}
    assert cached == {"interests"}  # the interest model learns from synthetic posts only; nothing of the corpus
