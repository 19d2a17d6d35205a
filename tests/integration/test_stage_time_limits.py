"""Per-stage time limits in the Prefect flow (orchestration.stage_timeouts), enforced in the stage's thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from tests.integration.conftest import make_project
from textsift.config import load_params
from textsift.errors import ConfigError

pytestmark = pytest.mark.integration


async def _task_runs(flow_run_id: object) -> list:
    async with get_client() as client:
        return await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))


def _logs(flow_run_id: object) -> list:
    """The flow run's logs, once every log line still queued has reached the API (a drain inside an event loop
    only returns an awaitable)."""
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=30)
    return asyncio.run(_read_logs(flow_run_id))


async def _read_logs(flow_run_id: object) -> list:
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    async with get_client() as client:
        return await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))


def test_a_stage_past_its_limit_fails_once_without_retry_and_writes_nothing(tmp_path: Path) -> None:
    from flows.pipeline import pipeline

    root = make_project(tmp_path / "p", orchestration__stage_timeouts={"ingest": 1e-6})
    state = pipeline(root=str(root), return_state=True)
    assert state.is_failed()
    runs = {run.name: run for run in asyncio.run(_task_runs(state.state_details.flow_run_id))}
    ingest = runs["ingest"]
    assert ingest.state.is_failed() and "timeout" in ingest.state.message.lower()
    assert ingest.run_count == 1  # a timeout is not retried: it would only time out again
    upstream_free = {"key", "train_interests"}  # they read nothing ingest writes
    assert not any(r.state.is_completed() for name, r in runs.items() if name not in upstream_free)  # none downstream
    assert not (root / "data/ingest/corpus.parquet").exists()  # no half-written output
    client = MlflowClient(f"sqlite:///{root / 'mlruns.db'}")
    experiment = client.get_experiment_by_name("textsift")
    child = client.search_runs([experiment.experiment_id], "tags.`textsift.stage` = 'ingest'")
    assert {run.info.status for run in child} <= {"FAILED"}  # stopped before or inside its MLflow run: never
    parent = client.search_runs([experiment.experiment_id], "tags.`textsift.runner` = 'prefect'")  # left RUNNING
    assert [run.info.status for run in parent] == ["FAILED"]
    # no task warns that its limit "cannot interrupt" a worker thread (Prefect's thread timeout did, on every task)
    logs = _logs(state.state_details.flow_run_id)
    assert logs and not [log for log in logs if "Timeout of" in log.message]  # the lines reached the API, none warns


def test_limits_name_known_stages_and_are_positive(tmp_path: Path) -> None:
    from flows.pipeline import time_limit

    root = make_project(tmp_path / "q", orchestration__stage_timeouts={"evaluate": 7200})
    params = load_params(root / "params.yaml")
    assert time_limit(params, "evaluate") == 7200 and time_limit(params, "ingest") == 21600
    with pytest.raises(ConfigError, match="stage_timeouts: unknown stages evaluat"):  # a params error, not a run's
        make_project(tmp_path / "r", orchestration__stage_timeouts={"evaluat": 10})
    with pytest.raises(ConfigError, match="stage_timeouts must be positive seconds: ingest"):
        make_project(tmp_path / "s", orchestration__stage_timeouts={"ingest": -1})  # validates what it writes
