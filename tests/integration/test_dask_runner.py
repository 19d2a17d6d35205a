"""The documented command on a real Dask cluster gives the same outputs as threads, and GPU stages run only on
the worker that advertises the GPU resource.

The cluster is what a platform engineer starts: ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1,
"cpu" with no resources and "gpu" advertising ``GPU=1``. The pipeline runs as ``python -m flows.pipeline
--task-runner dask --dask-address ... --gpu-resource GPU`` in its own process (run as ``__main__``, its tasks
must still unpickle on the workers). A scheduler plugin records, for every finished task, its resource
restrictions and the worker it ran on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from distributed import Client
from distributed.diagnostics.plugin import SchedulerPlugin
from prefect.server.api.server import SubprocessASGIServer

from tests.integration.conftest import FULL_PIPELINE, REPO, make_project, sha256
from textsift.config import load_params
from textsift.registry import instances
from textsift.secret_key import KEY_FILE

pytestmark = pytest.mark.integration
SAME_BYTES = ("data/ingest/corpus.parquet", "models/fill_in.json", "data/indexes/w2v/vocab.txt",
              "models/detector.json", "data/detected/spans.parquet", "metrics/train_detectors.json",
              "metrics/detect.json",
              *(f"data/privatized/{s}.parquet" for s in FULL_PIPELINE["privatize__settings"]),
              *(f"metrics/privatize/{s}.json" for s in FULL_PIPELINE["privatize__settings"]),
              "data/lrp_budgets/embeddings.parquet", "data/lrp_budgets/budgets.npz",
              "data/embeddings/lrp_eps50.parquet", "data/embeddings/uniform_eps50.manifest.json",
              "metrics/evaluate_embeddings.json")
DASK = str(Path(sys.executable).parent / "dask")


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
def dask_cluster(folder: Path, env: dict[str, str]) -> Iterator[str]:
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 ("cpu"; "gpu" advertising GPU=1); yields
    the scheduler's address and stops them all."""
    scheduler_file = folder / "scheduler.json"
    log = (folder / "dask.log").open("wb")
    processes = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(scheduler_file)], cwd=REPO, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        for name, options in (("cpu", ["--nthreads", "1"]), ("gpu", ["--nthreads", "2", "--resources", "GPU=1"])):
            processes.append(subprocess.Popen([DASK, "worker", address, "--name", name, "--host", "127.0.0.1",
                                               "--no-dashboard", "--no-nanny", *options], cwd=REPO, env=env,
                                              stdout=log, stderr=subprocess.STDOUT))
        with Client(address) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


@pytest.fixture(scope="module")
def dask_run(tmp_path_factory: pytest.TempPathFactory, flow_run: dict) -> dict:
    """The documented command on the cluster: the same bytes as the thread run's. The models come from the per-user
    model cache the thread run filled (training them again on the workers tripled this test's time on CI's 2 cores;
    trainings' identity is the DVC tests' subject), so what is compared is the runner's placement and ordering."""
    root = make_project(tmp_path_factory.mktemp("dask"), **FULL_PIPELINE)
    (root / KEY_FILE).parent.mkdir(parents=True)
    shutil.copy(flow_run["root"] / KEY_FILE, root / KEY_FILE)  # the same key holder: the same draws
    api = os.environ.get("PREFECT_API_URL") or SubprocessASGIServer().api_url  # the session's temporary API
    env = {**os.environ, "PREFECT_API_URL": api,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
    with dask_cluster(root.parent, env) as address, Client(address) as client:
        client.register_plugin(Placements())
        command = [sys.executable, "-m", "flows.pipeline", "--root", str(root), "--task-runner", "dask",
                   "--dask-address", address, "--gpu-resource", "GPU"]
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=480, check=False)
        placements = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["placements"].done)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return {"root": root, "placements": placements}


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
    assert set(restricted) == {"gpu"}
    assert all(resources == {"GPU": 1} for resources, _ in dask_run["placements"] if resources)
    unrestricted = len(dask_run["placements"]) - len(restricted)
    assert unrestricted == sum(not inst.stage.gpu for inst in stages)  # ingest, evaluate
