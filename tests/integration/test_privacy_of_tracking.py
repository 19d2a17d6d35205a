"""No document text reaches MLflow (params, tags, metrics, artifacts) or Prefect's logs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
from prefect.logging.handlers import APILogHandler

from textsift.corpus import read_corpus

pytestmark = pytest.mark.integration
# Privatized examples in the report are allowed output, but they may carry what a mechanism
# leaked; this scan is about raw text reaching tracking, so the run shows none.
FLOW_OVERRIDES = {"report__show_examples": False}


def _secrets(root: Path) -> list[str]:
    """Every document text, and every planted personal-data value of 6+ characters."""
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    values = set(corpus["text"])
    for text, spans in zip(corpus["text"], corpus["spans"], strict=True):
        values.update(text[s["start"]:s["end"]] for s in spans if s["end"] - s["start"] >= 6)
    return sorted(values)


def _mlflow_blobs(result: dict, dest: Path) -> dict[str, str]:
    """Everything MLflow holds for the run's experiment, keyed by where it was found."""
    client = MlflowClient(result["tracking_uri"])
    runs = client.search_runs([result["experiment_id"]])
    blobs = {}
    for run in runs:
        name = run.info.run_name
        blobs.update({f"{name} param {k}": f"{k}={v}" for k, v in run.data.params.items()})
        blobs.update({f"{name} tag {k}": f"{k}={v}" for k, v in run.data.tags.items()})
        blobs.update({f"{name} metric {k}": k for k in run.data.metrics})
        local = Path(client.download_artifacts(run.info.run_id, "", str(dest / run.info.run_id)))
        blobs.update({f"{name} artifact {p.relative_to(local)}": p.read_bytes().decode("utf-8", "replace")
                      for p in local.rglob("*") if p.is_file()})
    return blobs


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
    while time.time() < deadline and not any("ingest:" in m for m in messages):
        with get_client(sync_client=True) as client:
            logs = client.read_logs(
                LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run["flow_run_id"]])), limit=200
            )
        messages = [log.message for log in logs]
        time.sleep(0.5)
    assert any("ingest:" in m for m in messages)  # textsift's own log lines reached Prefect
    leaked = [s for s in secrets if any(s in m for m in messages)]
    assert leaked == []


def test_stage_logs_reach_prefect_from_a_worker_without_prefects_handler(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A separately started Dask worker has no APILogHandler on `textsift`: the task forwards the records."""
    import logging

    from prefect import flow

    from flows.pipeline import stage_task
    from tests.integration.conftest import make_project

    root = make_project(tmp_path / "project")
    logger = logging.getLogger("textsift")
    monkeypatch.setattr(logger, "handlers", [h for h in logger.handlers if not isinstance(h, APILogHandler)])

    @flow
    def ingest_only() -> dict:
        return stage_task("ingest", "ingest", None, str(root), str(root / "params.yaml"), None)

    state = ingest_only(return_state=True)
    assert state.is_completed()
    assert not any(type(h).__name__ == "_RunLogForwarder" for h in logger.handlers)  # removed afterwards
    APILogHandler().flush()
    messages: list[str] = []
    deadline = time.time() + 30
    while time.time() < deadline and not any("stage ingest finished" in m for m in messages):
        with get_client(sync_client=True) as client:
            logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[state.state_details.flow_run_id])),
                                    limit=200)
        messages = [log.message for log in logs]
        time.sleep(0.5)
    assert any("stage ingest finished" in m for m in messages)
    assert len([m for m in messages if "stage ingest finished" in m]) == 1  # forwarded once, not twice
