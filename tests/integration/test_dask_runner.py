"""The flow on a 2-worker Dask LocalCluster (prefect-dask) gives the same outputs as threads."""

from __future__ import annotations

import json

import pytest

from flows.pipeline import pipeline, task_runner
from tests.integration.conftest import FULL_PIPELINE, make_project, sha256

pytestmark = pytest.mark.integration
SAME_BYTES = ("data/ingest/corpus.parquet", "models/fill_in.json", "data/indexes/w2v/vocab.txt",
              "models/detector.json", "data/detected/spans.parquet", "metrics/train_detectors.json",
              *(f"data/privatized/{s}.parquet" for s in FULL_PIPELINE["privatize__settings"]),
              *(f"metrics/privatize/{s}.json" for s in FULL_PIPELINE["privatize__settings"]))


def test_dask_runner_matches_thread_runner(flow_run: dict, tmp_path) -> None:
    root = make_project(tmp_path / "dask", **FULL_PIPELINE)
    runner = task_runner("dask", workers=2, address=None)
    state = pipeline.with_options(task_runner=runner)(root=str(root), return_state=True)
    assert state.is_completed(), state.message
    for out in SAME_BYTES:
        assert sha256(root / out) == sha256(flow_run["root"] / out), out
    dask_eval = json.loads((root / "metrics/evaluate.json").read_text())
    thread_eval = json.loads((flow_run["root"] / "metrics/evaluate.json").read_text())
    for setting, by_classifier in thread_eval.items():
        assert dask_eval[setting]["tfidf_logreg"] == by_classifier["tfidf_logreg"], setting
        for test_on, metrics in by_classifier["transformer"].items():
            for name, value in metrics.items():  # fine-tuning sums floats in thread-dependent order
                assert dask_eval[setting]["transformer"][test_on][name] == pytest.approx(value, abs=0.05), name
