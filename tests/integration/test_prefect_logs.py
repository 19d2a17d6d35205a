"""Stage log lines land on the task run that wrote them, even with tasks side by side and no Prefect handler, and
exactly once.

A flow run started by a worker has no Prefect API handler on the ``textsift`` logger (Prefect configured its
logging before the flow module asked for one), so the flow forwards the library's records itself; with a
forwarder per task, every running task got every task's lines (23 of 43 misfiled under a worker).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import LogFilter, LogFilterTaskRunId
from prefect.futures import wait
from prefect.logging.handlers import APILogHandler, APILogWorker
from prefect.task_runners import ThreadPoolTaskRunner

from tests.integration.conftest import flow_run_logs, make_project
from tests.integration.worker_flow import LINES, chatty

pytestmark = pytest.mark.integration


@flow(task_runner=ThreadPoolTaskRunner(max_workers=2))
def side_by_side() -> dict[str, str]:
    futures = {name: chatty.submit(name) for name in ("alpha", "beta")}
    wait(list(futures.values()))
    for future in futures.values():
        future.result()
    return {name: str(future.task_run_id) for name, future in futures.items()}


def test_each_task_run_gets_its_own_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    logger = logging.getLogger("textsift")
    monkeypatch.setattr(logger, "handlers", [h for h in logger.handlers if not isinstance(h, APILogHandler)])
    runs = side_by_side()
    APILogWorker.drain_all(timeout=30)
    with get_client(sync_client=True) as client:
        for name, run_id in runs.items():
            logs = client.read_logs(log_filter=LogFilter(task_run_id=LogFilterTaskRunId(any_=[run_id])))
            lines = [log.message for log in logs if log.message.startswith("line ")]
            assert sorted(lines) == sorted(f"line {name}-{i}" for i in range(LINES)), name


def test_stage_logs_reach_prefect_from_a_worker_without_prefects_handler(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A separately started Dask worker has no APILogHandler on `textsift`: the task forwards the records."""
    from flows.pipeline import stage_task

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
        messages = flow_run_logs(str(state.state_details.flow_run_id))
        time.sleep(0.5)
    assert any("stage ingest finished" in m for m in messages)
    assert len([m for m in messages if "stage ingest finished" in m]) == 1  # forwarded once, not twice
