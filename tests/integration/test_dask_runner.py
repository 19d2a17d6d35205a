"""The flow on a real 2-worker Dask cluster (prefect-dask) gives the same outputs as threads, and
GPU stages run only on the worker that advertises the GPU resource.

The cluster (distributed.SpecCluster, in-process workers): "cpu" with no resources, "gpu"
advertising ``GPU=1``; the flow runs with ``gpu_resource="GPU"``. A scheduler plugin records,
for every finished task, its resource restrictions and the worker it ran on.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Scheduler, SpecCluster, Worker
from distributed.diagnostics.plugin import SchedulerPlugin

from flows.pipeline import pipeline, task_runner
from tests.integration.conftest import FULL_PIPELINE, make_project, sha256
from textsift import user_cache
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


class Placements(SchedulerPlugin):
    """(resource restrictions, worker name) of every task that finished on a worker."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.done: list[tuple[dict[str, float], str]] = []

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if start == "processing" and finish == "memory":
            task = self.scheduler.tasks[key]
            self.done.append((dict(task.resource_restrictions or {}), self.scheduler.workers[kwargs["worker"]].name))


@pytest.fixture(scope="module")
def dask_run(tmp_path_factory: pytest.TempPathFactory, flow_run: dict) -> Iterator[dict]:
    """The flow on Dask, its models trained again (no per-user model cache): the same bytes as the thread run's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(user_cache.ENV, user_cache.OFF)
        yield _dask_run(tmp_path_factory, flow_run)


def _dask_run(tmp_path_factory: pytest.TempPathFactory, flow_run: dict) -> dict:
    root = make_project(tmp_path_factory.mktemp("dask"), **FULL_PIPELINE)
    (root / KEY_FILE).parent.mkdir(parents=True)
    shutil.copy(flow_run["root"] / KEY_FILE, root / KEY_FILE)  # the same key holder: the same draws
    specs = {"cpu": {"cls": Worker, "options": {"nthreads": 1}},
             "gpu": {"cls": Worker, "options": {"nthreads": 2, "resources": {"GPU": 1}}}}
    with SpecCluster(workers=specs, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}) as cluster:
        plugin = Placements(cluster.scheduler)
        cluster.scheduler.add_plugin(plugin)
        runner = task_runner("dask", workers=2, address=cluster.scheduler_address)
        state = pipeline.with_options(task_runner=runner)(root=str(root), gpu_resource="GPU", return_state=True)
    assert state.is_completed(), state.message
    return {"root": root, "placements": plugin.done}


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
