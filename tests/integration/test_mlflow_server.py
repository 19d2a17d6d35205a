"""Stages log to a real `mlflow server` started on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.integration.conftest import make_project
from textsift.runner import run_stage

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def mlflow_server(tmp_path: Path):
    port = _free_port()
    mlflow_bin = Path(sys.executable).with_name("mlflow")
    proc = subprocess.Popen(
        [str(mlflow_bin), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--artifacts-destination", str(tmp_path / "server-artifacts")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},  # as infra/stack.py: no job processes
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(1)
    else:
        proc.kill()
        pytest.fail("mlflow server did not answer within 120 s")
    try:
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


def test_stages_log_to_a_real_server(mlflow_server: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    root = make_project(tmp_path / "project",
                        embedding_dp__settings={"lrp_eps50": {"allocation": "lrp", "epsilon_max": 50}})
    run_stage("ingest", root=root)
    run_stage("train_fill_in", root=root)
    run_stage("train_detectors", root=root)  # the attack stage fetches the detector back too
    run_stage("train_interests", root=root)
    run_stage("privatize", root=root, key="ds_default")  # fetches the fill-in model back through the server
    run_stage("outsider", root=root, key="ds_default")  # its replays too; evaluate reads its figures
    run_stage("detect", root=root)  # the spans lrp_budgets reads
    run_stage("lrp_budgets", root=root)
    run_stage("embedding_dp", root=root, key="lrp_eps50")
    for stage in ("attack", "evaluate_embeddings", "evaluate"):
        run_stage(stage, root=root)
    assert not (root / "mlruns.db").exists()  # nothing went to the embedded store
    client = MlflowClient(mlflow_server)
    experiment = client.get_experiment_by_name("textsift")
    runs = {r.data.tags["textsift.stage"]: r for r in client.search_runs([experiment.experiment_id])}
    assert {"ingest", "train_fill_in", "train_detectors", "train_interests", "privatize", "outsider", "lrp_budgets",
            "embedding_dp", "attack", "evaluate_embeddings", "evaluate"} <= set(runs)
    grid = {a.path for a in client.list_artifacts(runs["embedding_dp"].info.run_id, "embedding_dp")}
    assert {"embedding_dp/grid.csv", "embedding_dp/lrp_eps50.manifest.json"} <= grid
    fill_in = {a.path for a in client.list_artifacts(runs["train_fill_in"].info.run_id, "fill_in")}
    assert "fill_in/MLmodel" in fill_in  # the fill-in model went through the server's artifact proxy
    detector = {a.path for a in client.list_artifacts(runs["train_detectors"].info.run_id)}
    assert "detector" in detector
    assert runs["ingest"].data.metrics["docs.read"] == 120
    private = client.search_runs([experiment.experiment_id], "tags.`textsift.setting` = 'ds_default'")[0]
    artifacts = {a.path for a in client.list_artifacts(private.info.run_id, "tfidf_logreg")}
    assert "tfidf_logreg/MLmodel" in artifacts  # each privatized corpus's classifier, in its frontier@ run
    original = client.search_runs([experiment.experiment_id], "tags.`textsift.setting` = 'original'")[0]
    assert not client.list_artifacts(original.info.run_id, "tfidf_logreg")  # its weights mark its training text
    versions = client.search_model_versions("name = 'textsift-classifier'")  # the server's model registry
    assert {v.tags["textsift.setting"] for v in versions} == {"ds_default"}
