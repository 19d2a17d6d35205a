"""The flow on a 2-worker Dask LocalCluster (prefect-dask) gives the same outputs as threads."""

from __future__ import annotations

import pytest

from flows.pipeline import pipeline, task_runner
from tests.integration.conftest import make_project, sha256

pytestmark = pytest.mark.integration


def test_dask_runner_matches_thread_runner(flow_run: dict, tmp_path) -> None:
    root = make_project(tmp_path / "dask")
    runner = task_runner("dask", workers=2, address=None)
    state = pipeline.with_options(task_runner=runner)(root=str(root), return_state=True)
    assert state.is_completed(), state.message
    for out in ("data/ingest/corpus.parquet", "metrics/evaluate.json"):
        assert sha256(root / out) == sha256(flow_run["root"] / out), out
