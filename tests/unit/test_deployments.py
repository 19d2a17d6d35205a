"""prefect.yaml is the one deployment recipe, and `python -m flows.deployments` serves exactly it."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import cloudpickle
import pytest
import yaml

from flows.deployments import RECIPE, declared

REPO = Path(__file__).resolve().parents[2]


def test_the_recipe_lives_at_the_project_root_and_points_at_the_flow() -> None:
    assert RECIPE == REPO / "prefect.yaml"
    document = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    scheduled = [d for d in document["deployments"] if d.get("schedules")]
    assert len(scheduled) == 1  # one recipe, one schedule (the Dask variant runs on demand)
    path, name = scheduled[0]["entrypoint"].split(":")
    assert (REPO / path).is_file() and f"def {name}(" in (REPO / path).read_text(encoding="utf-8")


def test_served_deployment_has_the_recipes_name_schedule_and_parameters() -> None:
    from flows.pipeline import pipeline

    spec = declared()
    assert spec["cron"] == "0 3 * * *" and spec["parameters"] == {"root": ".", "slots": 2}
    deployment = pipeline.to_deployment(name=spec["name"], cron=spec["cron"], parameters=spec["parameters"])
    assert deployment.name == "textsift-nightly"
    assert [s.schedule.cron for s in deployment.schedules] == ["0 3 * * *"]


def _unpickled_on_a_worker(blob: bytes) -> subprocess.CompletedProcess:
    """Load a pickled task in another process with the project folder on its path, as a ``dask worker`` does."""
    code = "import sys, cloudpickle; t = cloudpickle.loads(sys.stdin.buffer.read()); print(t.fn.__module__)"
    return subprocess.run([sys.executable, "-c", code], input=blob, cwd=REPO, capture_output=True, timeout=120,
                          check=False)


def test_the_dask_deployment_loads_as_a_worker_would_and_its_tasks_unpickle_on_another_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.flows import load_flow_from_entrypoint
    from prefect_dask import DaskTaskRunner

    from flows.pipeline import DASK_ADDRESS_ENV

    document = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    (variant,) = [d for d in document["deployments"] if d["name"] == "textsift-dask"]
    address = variant["job_variables"]["env"][DASK_ADDRESS_ENV]
    monkeypatch.setenv(DASK_ADDRESS_ENV, address)
    monkeypatch.chdir(REPO)
    flow = load_flow_from_entrypoint(variant["entrypoint"])  # Prefect's loader: the file as a script of its own
    assert isinstance(flow.task_runner, DaskTaskRunner) and flow.task_runner.address == address
    assert set(variant["parameters"]) <= set(inspect.signature(flow.fn).parameters)
    loaded = _unpickled_on_a_worker(cloudpickle.dumps(flow.fn.__globals__["stage_task"]))
    assert loaded.returncode == 0 and loaded.stdout.split() == [b"flows.pipeline"], loaded.stderr[-2000:]
    # the nightly entrypoint's file loaded the same way defines its tasks under the script's name: no worker has it
    script = load_flow_from_entrypoint("flows/pipeline.py:pipeline")
    assert _unpickled_on_a_worker(cloudpickle.dumps(script.fn.__globals__["stage_task"])).returncode != 0
