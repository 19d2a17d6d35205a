"""Every way of running the pipeline ends with the same bytes (one setting of each mechanism): a flow on threads killed
(SIGKILL) at the commit points of its run and rerun each time, one output of each kind damaged and rebuilt, and the
documented command on a team's Dask cluster, which is the uninterrupted run the others are held to. A thread run of
its own as the reference took ~45 s more and proved nothing the Dask run does not: its 56 outputs were the Dask
run's, byte for byte.

Standing fault injection, one chain: the flow runs in a child process (a fork of a forkserver that imported it once)
that kills itself at the first sampled commit point no earlier child was killed at
(:mod:`tests.integration.fault_points`: just before an output area's file takes its place, or just after for data
and models; in ``make test`` before each commit to the areas this test names, after it for the privatized corpora
and the vault: 9 kills; all 30+ in ``make fuzz``); the next child reruns the flow, which skips what completed and
redoes the rest, until a child runs to the end. The first child makes the project's key and trains the models; the
Dask run, in another project, holds the same key and takes the models from the per-user model cache the chain filled
(training them again on the workers tripled its time on CI's 2 cores; trainings' identity is the DVC tests' subject).

A team's stack from ``infra/stack.py up`` runs the documented command: on its Dask cluster the outputs are those of
threads and GPU stages run only on the worker that advertises the GPU resource; its MLflow and Prefect servers keep
the run in PostgreSQL, and every model and file the stages log goes through the MLflow server's artifact proxy.

The stack is what a platform engineer starts with one command: PostgreSQL, an MLflow tracking server and a Prefect
server on it, a work pool and worker, ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 ("cpu-0" with
no resources, "gpu-0" advertising ``GPU=1``). The pipeline runs as ``python -m flows.pipeline --gpu-resource GPU``
with the variables ``stack.py up`` prints (``TEXTSIFT_DASK_ADDRESS`` makes Dask the runner) in its own process (run
as ``__main__``, its tasks must still unpickle on the workers). A scheduler plugin records, for every finished task,
its resource restrictions and the worker it ran on. ``down --purge`` stops everything.
"""

from __future__ import annotations

import json
import multiprocessing
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
from tests.integration.fault_points import REQUIRED_AREAS, SHARE, TEMPORARY, sampled
from textsift.config import load_params
from textsift.registry import instances
from textsift.secret_key import KEY_FILE

# 390-530 s on 2 busy cores in a fresh-clone CI (9 killed runs and the last, a stack and a Dask run; make fuzz:
# ~40 kills): its own limit, far above
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]
MOST_KILLS = 80  # a guard: the flow has ~40 commit points, so a chain that never ends fails here
FLOW_OVERRIDES = ONE_SETTING_EACH  # a kill lands on an output area, not a file: more settings add no commit point
STACK = [sys.executable, str(REPO / "infra" / "stack.py")]


def _outputs(root: Path) -> dict[str, str]:
    """sha256 of every output the stages write (data, models, metrics, reports), by path."""
    found = {}
    for folder in ("data", "models", "metrics", "reports"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(root))] = sha256(path)
    return found


@pytest.fixture(scope="module")
def killed_chain(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from prefect.server.api.server import SubprocessASGIServer

    root = make_project(tmp_path_factory.mktemp("killed"), **{**FULL_PIPELINE, **FLOW_OVERRIDES})
    used = root.parent / "kill_points.txt"
    os.environ.setdefault("PREFECT_API_URL", SubprocessASGIServer().api_url)  # the session's temporary API
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.integration.fault_points"])
    from tests.integration.fault_points import run_killed

    codes = []
    for attempt in range(MOST_KILLS + 1):
        child = context.Process(target=run_killed, args=(str(root), str(used), attempt < MOST_KILLS))
        child.start()
        child.join(timeout=300)
        codes.append(child.exitcode)
        if child.exitcode == 0:
            break
        assert child.exitcode == -9, f"child {attempt} ended with {child.exitcode}, not killed"
    points = used.read_text(encoding="utf-8").split("\n")[:-1] if used.exists() else []
    seen = set(Path(f"{used}.seen").read_text(encoding="utf-8").split("\n")[:-1])
    return {"root": root, "codes": codes, "points": points, "seen": seen}


def test_kills_across_the_stages_then_the_bytes_of_an_uninterrupted_run(killed_chain: dict, dask_run: dict) -> None:
    points, seen = killed_chain["points"], killed_chain["seen"]
    assert killed_chain["codes"][-1] == 0 and len(points) == len(killed_chain["codes"]) - 1, points
    assert len(seen | set(points)) >= 30  # commit points in every stage
    share = float(os.environ.get("TEXTSIFT_FAULT_SHARE", SHARE))
    assert all(sampled(p, share) for p in points)  # kills only where sampled ...
    assert {p for p in seen if sampled(p, share)} <= set(points)  # ... and a sampled point passed had been killed at
    areas = {p.split(" ", 1)[1] for p in points}
    assert REQUIRED_AREAS <= areas, points  # the end of the DAG too, not only early on
    want, got = _outputs(dask_run["root"]), _outputs(killed_chain["root"])
    assert len(want) > 50 and set(got) == set(want), sorted(set(got) ^ set(want))
    differ = sorted(path for path in want if got[path] != want[path])
    assert not differ, (differ, points)
    leftovers = [p for p in killed_chain["root"].rglob(".*")
                 if p.name.endswith((".tmp", ".old")) or (p.is_dir() and TEMPORARY.search(str(p)))]
    assert not leftovers  # every temporary a kill left was removed by the run that redid its write
    assert json.loads((killed_chain["root"] / "metrics/evaluate.json").read_text())


DAMAGE = {  # one output of each kind, and how it is damaged
    "data/ingest/corpus.parquet": lambda b: b[: len(b) // 2],  # a table cut short
    "data/privatized/mdp.parquet": lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:],  # one bit flipped
    "models/detector.json": lambda b: b[:5],  # a model pointer cut short
    "data/indexes/w2v/index.ann": lambda b: bytes(len(b)),  # an index folder's file zeroed
    "data/lrp_budgets/budgets.npz": lambda b: b"",  # an array file emptied
    "data/vault/red.bin": lambda b: b[:-1] + bytes([b[-1] ^ 1]),  # the sealed vault, one bit flipped
    "metrics/detect.json": lambda b: b"[]",  # a metrics file replaced
    "reports/evaluate/frontier.csv": None,  # a report deleted
}


def test_each_kind_of_damaged_output_is_rebuilt_to_the_bytes_of_an_uninterrupted_run(killed_chain: dict,
                                                                                     dask_run: dict) -> None:
    from flows.pipeline import pipeline

    root = killed_chain["root"]
    for name, damage in DAMAGE.items():
        path = root / name
        if damage is None:
            path.unlink()
        else:
            path.write_bytes(damage(path.read_bytes()))
    assert pipeline(root=str(root), return_state=True).is_completed()
    want, got = _outputs(dask_run["root"]), _outputs(root)
    assert set(got) == set(want) and not sorted(path for path in want if got[path] != want[path])


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
def dask_run(tmp_path_factory: pytest.TempPathFactory, killed_chain: dict) -> dict:
    """The documented command on the cluster, uninterrupted, in a project of its own with the chain's key (the same
    draws) and the models from the per-user cache the chain filled: what it adds is the runner's placement and
    ordering."""
    root = make_project(tmp_path_factory.mktemp("dask"), **{**FULL_PIPELINE, **FLOW_OVERRIDES})
    (root / KEY_FILE).parent.mkdir(parents=True)
    shutil.copy(killed_chain["root"] / KEY_FILE, root / KEY_FILE)  # the same key holder: the same draws
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
        artifacts = _artifacts_through_the_server(tracking, runs)
        flow_runs = httpx.post(f"{stack['PREFECT_API_URL']}/flow_runs/filter", json={}, timeout=30).json()
        pool = httpx.get(f"{stack['PREFECT_API_URL']}/work_pools/textsift", timeout=30).json()
        stored = _stored_in_postgres(state)
    return {"root": root, "placements": placements, "runs": runs, "classifiers": classifiers,
            "flow_runs": flow_runs, "stored": stored, "pool": pool, "artifacts": artifacts}


def _artifacts_through_the_server(tracking: MlflowClient, runs: list[Any]) -> dict[str, set[str]]:
    """What the stack's MLflow server lists (its artifact proxy, ``--artifacts-destination``) under the runs that
    log models and files: the fill-in model, the detector, an LRP setting's grid and manifest, and the frontier
    classifiers of a privatized corpus and of the original text."""
    def listed(run: Any, folder: str | None = None) -> set[str]:
        return {a.path for a in tracking.list_artifacts(run.info.run_id, folder)}

    named = {r.info.run_name: r for r in runs}
    return {"fill_in": listed(named["train_fill_in"], "fill_in"), "detector": listed(named["train_detectors"]),
            "grid": listed(named["embedding_dp@lrp_eps50"], "embedding_dp"),
            "private": listed(named["frontier@ds"], "tfidf_logreg"),
            "original": listed(named["frontier@original"], "tfidf_logreg")}


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


def test_stages_log_their_models_and_files_through_the_stacks_mlflow_server(dask_run: dict) -> None:
    """Every stage process reached the server: nothing went to an embedded store, and what they log went through the
    server's artifact proxy (the fill-in model the privatize stage then fetched back, the detector the attack stage
    reads, the LRP grid). Only a privatized corpus's classifier is logged: the original's weights mark its training
    text."""
    artifacts = dask_run["artifacts"]
    assert not (dask_run["root"] / "mlruns.db").exists()
    assert "fill_in/MLmodel" in artifacts["fill_in"] and "detector" in artifacts["detector"]
    assert {"embedding_dp/grid.csv", "embedding_dp/lrp_eps50.manifest.json"} <= artifacts["grid"]
    assert "tfidf_logreg/MLmodel" in artifacts["private"] and not artifacts["original"]
    assert {v.tags["textsift.setting"] for v in dask_run["classifiers"]} == {"ds", "mdp", "red"}  # not "original"
