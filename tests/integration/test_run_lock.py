"""Runs started at once in one project, and a run killed with -9 (real processes, real Prefect and MLflow)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from uuid import UUID

import psutil
import pytest
from mlflow.tracking import MlflowClient
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows.crashed import mark_crashed
from tests.integration.conftest import make_project
from textsift.config import TrackingParams
from textsift.locks import RUN_RECORD, check_no_run, take_killed_runs
from textsift.tracking import resolve_uri

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def _start(root: Path) -> subprocess.Popen:
    """``make run``'s command as a fresh shell runs it: with no Prefect server address (another module of this
    pytest worker may have exported its session server's), so it starts its own temporary one."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return subprocess.Popen([sys.executable, "-m", "flows.pipeline", "--root", str(root)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


TRAINING = {"train_fill_in", "train_detectors"}


def _training_running(root: Path) -> bool:
    """Read-only, straight from the store's tables: an MLflow client here would race the run's own schema migration
    of a new ``mlruns.db`` ("table ... already exists")."""
    database = root / "mlruns.db"
    if not database.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)) as db:
            return db.execute(
                "SELECT 1 FROM runs JOIN tags ON tags.run_uuid = runs.run_uuid WHERE runs.status = 'RUNNING' "
                f"AND tags.key = 'textsift.instance' AND tags.value IN ({', '.join('?' * len(TRAINING))}) LIMIT 1",
                sorted(TRAINING)).fetchone() is not None
    except sqlite3.OperationalError:  # tables not made yet, or the store busy migrating
        return False


def _prefect_servers(pid: int) -> list[psutil.Process]:
    return [child for child in psutil.Process(pid).children(recursive=True)
            if "prefect.server.api.server:create_app" in " ".join(child.cmdline())]


def test_second_run_refused_and_a_killed_run_leaves_no_server_and_no_running_runs(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p")
    first = _start(root)
    try:
        _wait_for(lambda: (root / RUN_RECORD).exists() or first.poll() is not None, 180, "the first run's lock")
        assert first.poll() is None, first.stdout.read()
        servers = _prefect_servers(first.pid)
        assert len(servers) == 1

        second = subprocess.run([sys.executable, "-m", "flows.pipeline", "--root", str(root)], cwd=REPO,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        assert "run is in progress" in second.stderr and f"pid {first.pid}" in second.stderr

        # a training stage's MLflow run is open: its task run is running when the run is killed (the next stage is
        # handed to the runner only once ingest has finished, so ingest's output alone may catch none running)
        _wait_for(lambda: _training_running(root) or first.poll() is not None, 180, "the first run's training")
        assert first.poll() is None, first.stdout.read()
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        _, alive = psutil.wait_procs(servers, timeout=15)
        assert alive == [], "the temporary Prefect server outlived its killed run"
    finally:
        if first.poll() is None:
            first.kill()
    check_no_run(root)  # the kernel released the lock of the killed run

    client = MlflowClient(resolve_uri(TrackingParams(), root))
    experiment = client.get_experiment_by_name("textsift").experiment_id
    left_running = client.search_runs([experiment], "attributes.status = 'RUNNING'")
    assert left_running, "the killed run had started its MLflow parent run"
    next_start = subprocess.run([sys.executable, "-m", "textsift", "stage", "key", "--root", str(root)],
                                cwd=REPO, capture_output=True, text=True, timeout=300)
    assert next_start.returncode == 0, next_start.stderr[-2000:]
    for run in left_running:
        assert client.get_run(run.info.run_id).info.status == "KILLED"

    # its Prefect flow run was left RUNNING; the record of it outlives the ad-hoc stage run above (which took the
    # lock too), and the next flow run marks it (and its task runs) CRASHED
    left = take_killed_runs(root)
    killed_flow_run = left[0].get("flow_run_id") if left else None
    assert killed_flow_run is not None and take_killed_runs(root) == []  # handed over once
    with get_client(sync_client=True) as prefect:
        assert prefect.read_flow_run(UUID(killed_flow_run)).state.is_running()
        assert mark_crashed(killed_flow_run) >= 2  # the flow run and at least the stage task that was running
        assert prefect.read_flow_run(UUID(killed_flow_run)).state.is_crashed()
        of_killed = FlowRunFilter(id=FlowRunFilterId(any_=[UUID(killed_flow_run)]))
        task_runs = prefect.read_task_runs(flow_run_filter=of_killed)
        assert task_runs and all(t.state.is_final() for t in task_runs)
    assert mark_crashed("00000000-0000-0000-0000-000000000000") == 0  # unknown here: nothing to mark, no error
