"""Models no corpus changes are trained once per user: the interest model, and the detector's pretraining on the
corpus-independent sources (each project then trains it on its own corpus). A second project reuses the first
one's; a damaged entry is never used (another recipe is another entry: ``tests/unit/test_user_cache.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import make_project
from textsift import user_cache
from textsift.config import load_params
from textsift.stages import run_stage
from textsift.tracking import Tracker

pytestmark = pytest.mark.integration
TINY = {"detectors__data__synthetic_docs": 40, "detectors__pretrain__enabled": True}


def _train(root: Path) -> tuple[dict[str, float], dict, dict[str, str]]:
    run_stage("ingest", root=root)
    metrics = run_stage("train_detectors", root=root)
    tracker = Tracker(load_params(root / "params.yaml").tracking, root)
    run_id = tracker.find_run("textsift.stage", "train_detectors")
    assert run_id is not None
    pointer = json.loads((root / "models" / "interests.json").read_text(encoding="utf-8"))
    return metrics, pointer, tracker.run_tags(run_id)


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
    third = _train(make_project(tmp_path / "three", **TINY))
    assert third[2]["textsift.interests.cached"] == "false"
    assert third[1]["sha256"] == first[1]["sha256"]  # training is deterministic: the same bytes again
