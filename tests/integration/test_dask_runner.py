"""A team's stack from ``infra/stack.py up`` runs the documented command: on its Dask cluster the outputs are those of
threads and GPU stages run only on the worker that advertises the GPU resource; its MLflow and Prefect servers keep
the run in PostgreSQL.

The stack is what a platform engineer starts with one command: PostgreSQL, an MLflow tracking server and a Prefect
server on it, a work pool and worker, ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 ("cpu-0" with
no resources, "gpu-0" advertising ``GPU=1``). The pipeline runs as ``python -m flows.pipeline --gpu-resource GPU``
with the variables ``stack.py up`` prints (``TEXTSIFT_DASK_ADDRESS`` makes Dask the runner) in its own process (run
as ``__main__``, its tasks must still unpickle on the workers). A scheduler plugin records, for every finished task,
its resource restrictions and the worker it ran on. ``down --purge`` stops everything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from distributed import Client
from distributed.diagnostics.plugin import SchedulerPlugin
from mlflow.tracking import MlflowClient

from tests.integration.conftest import FULL_PIPELINE, ONE_SETTING_EACH, REPO, make_project, sha256
from textsift.config import load_params
from textsift.registry import instances
from textsift.secret_key import KEY_FILE

pytestmark = pytest.mark.integration
FLOW_OVERRIDES = ONE_SETTING_EACH  # the thread run's settings: one of each mechanism
SAME_BYTES = ("data/ingest/corpus.parquet", "models/fill_in.json", "data/indexes/w2v/vocab.txt",
              "models/detector.json", "data/detected/spans.parquet", "metrics/train_detectors.json",
              "metrics/detect.json",
              *(f"data/privatized/{s}.parquet" for s in ONE_SETTING_EACH["privatize__settings"]),
              *(f"metrics/privatize/{s}.json" for s in ONE_SETTING_EACH["privatize__settings"]),
              "data/lrp_budgets/embeddings.parquet", "data/lrp_budgets/budgets.npz",
              "data/embeddings/lrp_eps50.parquet", "data/embeddings/uniform_eps50.manifest.json",
              "metrics/evaluate_embeddings.json")
STACK = [sys.executable, str(REPO / "infra" / "stack.py")]


class Placements(SchedulerPlugin):
    """(resource restrictions, worker name) of every task that finished on a worker (runs in the scheduler)."""

    name = "placements"

    def __init__(self) -> None:
        self.done: list[tuple[dict[str, float], str]] = []

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if start == "processing" and finish == "memory":
            task = self.scheduler.tasks[key]
            self.done.append((dict(task.resource_restrictions or {}), self.scheduler.workers[kwargs["worker"]].name))


@contextmanager
def team_stack(state: Path, project: Path) -> Iterator[dict[str, str]]:
    """``python infra/stack.py up`` (one CPU and one GPU Dask worker); the variables it prints; ``down --purge``."""
    try:  # a killed `up` has recorded what it started: the `down` below stops it
        up = subprocess.run([*STACK, "up", "--state", str(state), "--workers", "1", "--gpu-workers", "1",
                             "--project", str(project)], cwd=REPO, capture_output=True, text=True, timeout=300,
                            check=False)
        assert up.returncode == 0, f"{up.stdout[-2000:]}\n{up.stderr[-3000:]}"
        yield dict(line.removeprefix("export ").split("=", 1) for line in up.stdout.splitlines()
                   if line.startswith("export "))
    finally:
        subprocess.run([*STACK, "down", "--state", str(state), "--purge"], cwd=REPO, timeout=120, check=False)


def _stored_in_postgres(state: Path) -> dict[str, list]:
    """What the stack's PostgreSQL holds: MLflow's runs (name, parent run) and Prefect's flow runs (state)."""
    import psycopg2

    port = json.loads((state / "stack.json").read_text(encoding="utf-8"))["postgres"]["port"]
    out: dict[str, list] = {}
    for database, query in (("mlflow", "select r.name, t.value from runs r left join tags t on t.run_uuid = "
                                       "r.run_uuid and t.key = 'mlflow.parentRunId'"),
                            ("prefect", "select state_type from flow_run")):
        with psycopg2.connect(host="127.0.0.1", port=port, user="textsift", dbname=database,
                              passfile=str(state / "pgpass")) as connection, \
                connection.cursor() as cursor:
            cursor.execute(query)
            out[database] = cursor.fetchall()
        connection.close()
    return out


@pytest.fixture(scope="module")
def dask_run(tmp_path_factory: pytest.TempPathFactory, flow_run: dict) -> dict:
    """The documented command on the cluster: the same bytes as the thread run's. The models come from the per-user
    model cache the thread run filled (training them again on the workers tripled this test's time on CI's 2 cores;
    trainings' identity is the DVC tests' subject), so what is compared is the runner's placement and ordering."""
    root = make_project(tmp_path_factory.mktemp("dask"), **{**FULL_PIPELINE, **FLOW_OVERRIDES})
    (root / KEY_FILE).parent.mkdir(parents=True)
    shutil.copy(flow_run["root"] / KEY_FILE, root / KEY_FILE)  # the same key holder: the same draws
    state = root.parent / "stack"
    with team_stack(state, root) as stack:
        env = {**os.environ, **stack,
               "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
        with Client(stack["TEXTSIFT_DASK_ADDRESS"]) as client:
            client.wait_for_workers(2, timeout=120)
            client.register_plugin(Placements())
            command = [sys.executable, "-m", "flows.pipeline", "--root", str(root), "--gpu-resource", "GPU"]
            done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=480,
                                  check=False)
            placements = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["placements"].done)
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        tracking = MlflowClient(stack["MLFLOW_TRACKING_URI"])  # through the server's REST API
        experiment = tracking.get_experiment_by_name(load_params(root / "params.yaml").tracking.experiment)
        runs = tracking.search_runs([experiment.experiment_id], max_results=1000)
        classifiers = tracking.search_model_versions("name = 'textsift-classifier'")
        flow_runs = httpx.post(f"{stack['PREFECT_API_URL']}/flow_runs/filter", json={}, timeout=30).json()
        pool = httpx.get(f"{stack['PREFECT_API_URL']}/work_pools/textsift", timeout=30).json()
        stored = _stored_in_postgres(state)
    return {"root": root, "placements": placements, "runs": runs, "classifiers": classifiers,
            "flow_runs": flow_runs, "stored": stored, "pool": pool}


def test_dask_runner_matches_thread_runner(flow_run: dict, dask_run: dict) -> None:
    root = dask_run["root"]
    for out in SAME_BYTES:
        assert sha256(root / out) == sha256(flow_run["root"] / out), out
    dask_eval = json.loads((root / "metrics/evaluate.json").read_text())
    thread_eval = json.loads((flow_run["root"] / "metrics/evaluate.json").read_text())
    for setting, by_classifier in thread_eval.items():
        assert dask_eval[setting]["tfidf_logreg"] == by_classifier["tfidf_logreg"], setting
        for test_on, metrics in by_classifier["transformer"].items():
            for name, value in metrics.items():  # fine-tuning sums floats in thread-dependent order
                assert dask_eval[setting]["transformer"][test_on][name] == pytest.approx(value, abs=0.05), name


def test_gpu_stages_run_only_on_the_gpu_worker(dask_run: dict) -> None:
    stages = instances(load_params(dask_run["root"] / "params.yaml"))
    restricted = [worker for resources, worker in dask_run["placements"] if resources]
    assert len(restricted) == sum(inst.stage.gpu for inst in stages) > 0
    assert set(restricted) == {"gpu-0"}
    assert all(resources == {"GPU": 1} for resources, _ in dask_run["placements"] if resources)
    unrestricted = len(dask_run["placements"]) - len(restricted)
    assert unrestricted == sum(not inst.stage.gpu for inst in stages)  # ingest, evaluate


def test_the_stacks_servers_keep_the_run_in_postgresql(dask_run: dict) -> None:
    stages = instances(load_params(dask_run["root"] / "params.yaml"))
    parents = [r for r in dask_run["runs"] if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1  # one pipeline run, its stage runs (and frontier runs) below it
    children = [r for r in dask_run["runs"] if r.data.tags.get("mlflow.parentRunId") == parents[0].info.run_id]
    assert {r.info.run_name for r in children} >= {inst.name for inst in stages}
    assert dask_run["classifiers"] and all(v.status == "READY" for v in dask_run["classifiers"])
    assert [r["state_type"] for r in dask_run["flow_runs"]] == ["COMPLETED"]
    assert dask_run["pool"]["concurrency_limit"] == 1  # the nightly and Dask deployments queue behind each other
    stored = dask_run["stored"]  # read from PostgreSQL itself: what the servers answered is what they keep there
    assert sorted(name for name, _ in stored["mlflow"]) == sorted(r.info.run_name for r in dask_run["runs"])
    assert [state for (state,) in stored["prefect"]] == ["COMPLETED"]
