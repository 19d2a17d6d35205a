"""Under a process worker, on a real Prefect server, each stage's log lines land on its own task run.

A worker starts the flow run in a new process after Prefect configured its logging, so the ``textsift`` logger
has no Prefect handler there and the flow forwards the library's records itself (``textsift_logs_to_prefect``);
with a forwarder per task, concurrent tasks got each other's lines (23 of 43 stage lines misfiled). Here a
process work pool runs ``worker_flow.py`` — two real stages and two talkers side by side — and every task
run's log is read back from the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterTaskRunId
from prefect.deployments import run_deployment
from prefect.server.api.server import SubprocessASGIServer

from tests.integration.conftest import REPO, make_project
from tests.integration.worker_flow import LINES, STAGES, TALKERS

pytestmark = pytest.mark.integration


def _prefect(*args: str, env: dict[str, str], timeout: float = 120) -> None:
    cli = Path(sys.executable).parent / "prefect"
    proc = subprocess.run([str(cli), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"prefect {args}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"


def test_stage_lines_land_on_their_own_task_run_under_a_process_worker(tmp_path: Path) -> None:
    api_url = os.environ.get("PREFECT_API_URL") or SubprocessASGIServer().api_url  # the session's server
    root = make_project(tmp_path / "project")
    env = {**os.environ, "PREFECT_API_URL": api_url,
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "components")])}
    env.pop("PREFECT_LOGGING_EXTRA_LOGGERS", None)  # as a user's shell starts a worker: flows/pipeline.py sets it
    # on import, after Prefect configured the flow-run process's logging — too late for a handler
    pool = f"textsift-test-{uuid.uuid4().hex[:8]}"
    _prefect("work-pool", "create", pool, "--type", "process", env=env)
    deployable = flow.from_source(source=str(REPO), entrypoint="tests/integration/worker_flow.py:stages_side_by_side")
    deployable.deploy(name=pool, work_pool_name=pool, parameters={"root": str(root)}, print_next_steps=False)
    run = run_deployment(f"textsift-worker-logs/{pool}", timeout=0)

    worker = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "worker", "start", "--pool", pool,
                               "--run-once", "--limit", "1"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = worker.communicate(timeout=300)
    finally:
        worker.kill()
    with get_client(sync_client=True) as client:
        deadline = time.monotonic() + 30
        while not (state := client.read_flow_run(run.id).state).is_final() and time.monotonic() < deadline:
            time.sleep(0.5)  # the run's final state may land just after the worker's exit
        assert state.is_completed(), f"{state}\n{output[-3000:]}"
        task_runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])))
        by_name = {task_run.name: task_run.id for task_run in task_runs}
        assert set(by_name) == {*STAGES, *TALKERS}
        time.sleep(2)  # the flow-run process shipped its logs before exiting; the server may still be writing
        logs = {name: [log.message for log in client.read_logs(
                    log_filter=LogFilter(task_run_id=LogFilterTaskRunId(any_=[run_id])))]
                for name, run_id in by_name.items()}
    for name in TALKERS:
        lines = [line for line in logs[name] if line.startswith("line ")]
        assert sorted(lines) == sorted(f"line {name}-{i}" for i in range(LINES)), name
    for name in STAGES:
        own = [line for line in logs[name] if line.startswith(("stage ", f"{name}:"))]
        assert f"stage {name} started" in own, logs[name]
        assert any(line.startswith(f"stage {name} finished") for line in own), logs[name]
        strays = [line for line in logs[name] if line.startswith("line ")
                  or any(line.startswith((f"stage {other} ", f"{other}:")) for other in STAGES if other != name)]
        assert strays == [], name
