"""GPU stages go to the Dask worker that advertises the GPU resource; CPU stages carry no restriction.

A real 2-worker cluster (distributed.SpecCluster, in-process workers): "cpu" with no resources,
"gpu" advertising ``GPU=1``. A scheduler plugin records, for every finished task, its resource
restrictions and the worker it ran on.
"""

from __future__ import annotations

from typing import Any

import pytest
from distributed import Scheduler, SpecCluster, Worker
from distributed.diagnostics.plugin import SchedulerPlugin
from prefect_dask import DaskTaskRunner

from flows.pipeline import pipeline
from tests.integration.conftest import make_project
from textsift.config import load_params
from textsift.registry import instances

pytestmark = pytest.mark.integration


class Placements(SchedulerPlugin):
    """(resource restrictions, worker name) of every task that finished on a worker."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.done: list[tuple[dict[str, float], str]] = []

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if start == "processing" and finish == "memory":
            task = self.scheduler.tasks[key]
            worker = self.scheduler.workers[kwargs["worker"]].name
            self.done.append((dict(task.resource_restrictions or {}), worker))


def test_gpu_stages_run_only_on_the_gpu_worker(tmp_path) -> None:
    root = make_project(tmp_path / "project")
    specs = {"cpu": {"cls": Worker, "options": {"nthreads": 1}},
             "gpu": {"cls": Worker, "options": {"nthreads": 2, "resources": {"GPU": 1}}}}
    with SpecCluster(workers=specs, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}) as cluster:
        plugin = Placements(cluster.scheduler)
        cluster.scheduler.add_plugin(plugin)
        runner = DaskTaskRunner(address=cluster.scheduler_address)
        state = pipeline.with_options(task_runner=runner)(root=str(root), gpu_resource="GPU", return_state=True)
    assert state.is_completed(), state.message
    stages = instances(load_params(root / "params.yaml"))
    restricted = [worker for resources, worker in plugin.done if resources]
    assert len(restricted) == sum(inst.stage.gpu for inst in stages) > 0
    assert set(restricted) == {"gpu"}
    assert all(resources == {"GPU": 1} for resources, _ in plugin.done if resources)
    assert len(plugin.done) - len(restricted) == sum(not inst.stage.gpu for inst in stages)  # ingest, evaluate
