"""The textsift pipeline as a Prefect 3 flow: one task per stage instance of the registry.

Runs locally against Prefect's temporary API by default (no server to start). With
``--task-runner dask`` the tasks run on a Dask cluster through prefect-dask: a LocalCluster
(``--dask-workers``) or an existing scheduler (``--dask-address``, or the environment's
``TEXTSIFT_DASK_ADDRESS``: then Dask is the default runner). Local Dask workers are
threads unless a Prefect server is configured (``PREFECT_API_URL``): worker processes would
each start their own temporary API otherwise. ``python -m flows.pipeline`` runs the importable
module's flow, never its ``__main__`` copy: a Dask worker imports the tasks it runs by module name.

One MLflow parent run per flow run; each stage instance logs a child run (ids are passed
explicitly, because tasks run on other threads or processes). One run at a time per project
folder (``textsift.locks.project_run``); a run's start marks KILLED the MLflow runs, and CRASHED the
Prefect flow and task runs (:mod:`flows.crashed`), that a killed earlier run left RUNNING.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from textsift.entry_point import prepare_process

prepare_process()
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "textsift")
os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")

import dask  # noqa: E402
from prefect import flow, get_run_logger, runtime, task  # noqa: E402
from prefect.artifacts import create_markdown_artifact, create_table_artifact  # noqa: E402
from prefect.exceptions import MissingContextError  # noqa: E402
from prefect.logging.handlers import APILogHandler  # noqa: E402
from prefect.task_runners import ThreadPoolTaskRunner  # noqa: E402

from flows.crashed import mark_crashed  # noqa: E402
from flows.notify import notify_failure  # noqa: E402
from flows.run_summary import (  # noqa: E402
    ARTIFACT_KEY,
    TIMES_KEY,
    parent_run_name,
    proposal_lines,
    stage_time_lines,
    stage_times,
    summary_markdown,
)
from flows.scheduling import submit_when_ready  # noqa: E402
from flows.stop_after import stop_after  # noqa: E402
from flows.temporary_api import start_temporary_api  # noqa: E402
from textsift import secret_key  # noqa: E402
from textsift.catalog import path as catalog_path  # noqa: E402
from textsift.config import Params, flatten, load_params  # noqa: E402
from textsift.corpus import disk_full_named  # noqa: E402
from textsift.errors import TextsiftError  # noqa: E402
from textsift.locks import check_no_run, project_run, take_killed_runs  # noqa: E402
from textsift.registry import instances, upstream_instances  # noqa: E402
from textsift.runner import run_stage  # noqa: E402
from textsift.tracking import Tracker  # noqa: E402

WALL_KEY = "stage.wall_seconds"
logging.getLogger("textsift").setLevel(logging.INFO)  # aggregates only; forwarded to Prefect's logs


def _retry_transient(_task: Any, _task_run: Any, state: Any) -> bool:
    """Retry unexpected failures (I/O hiccups, a busy database), never textsift's own errors or a stage
    that ran past its time limit (it would only time out again)."""
    try:
        state.result()
    except (TextsiftError, TimeoutError):
        return False
    except Exception:  # noqa: BLE001 - anything else may be transient
        return True
    return False


class _TaskRunLogForwarder(logging.Handler):
    """Sends each ``textsift`` record to the Prefect log of the task run whose thread emitted it.

    The run logger is looked up when the record is emitted, in the emitting thread's run context: one
    handler serves every task running side by side. (A handler per task, holding that task's logger, got
    every concurrent task's lines: under a worker 23 of 43 stage lines were filed under the wrong task run.)
    Records emitted outside any run (a library's helper thread) are left to the other handlers.
    """

    def __init__(self) -> None:
        super().__init__(logging.INFO)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            logger = get_run_logger()
        except MissingContextError:
            return
        logger.log(record.levelno, record.getMessage())


_FORWARDER = _TaskRunLogForwarder()


@contextmanager
def textsift_logs_to_prefect() -> Iterator[None]:
    """Forward the library's logs to the running task's Prefect log, where Prefect does not already.

    In the flow's process Prefect attaches its API handler to the ``textsift`` logger
    (``PREFECT_LOGGING_EXTRA_LOGGERS``); a flow run started by a worker after Prefect configured its logging, or
    a Dask worker process started on its own (``dask worker``), has no such handler, and the stage logs would
    only reach stderr. There one shared :class:`_TaskRunLogForwarder` is attached (once, and left attached).
    """
    logger = logging.getLogger("textsift")
    if not any(isinstance(h, APILogHandler | _TaskRunLogForwarder) for h in logger.handlers):
        logger.addHandler(_FORWARDER)
        logger.setLevel(logging.INFO)
    yield


@task(task_run_name="{instance_name}", retries=2, retry_delay_seconds=5, retry_condition_fn=_retry_transient)
def stage_task(
    instance_name: str, stage: str, key: str | None, root: str, params_path: str, parent_run_id: str,
    use_cache: bool = True, time_limit_s: float | None = None,
) -> dict[str, float]:
    """Run one stage instance (skipped when its inputs are unchanged, unless ``use_cache`` is off); its metrics.
    Past ``time_limit_s`` from the task's start the stage does not start at all."""
    started = time.monotonic()
    deadline = started + time_limit_s if time_limit_s is not None else None
    with textsift_logs_to_prefect(), stop_after(time_limit_s):
        metrics = run_stage(stage, root=root, params_path=params_path, key=key, parent_run_id=parent_run_id,
                            use_cache=use_cache, deadline=deadline)
    return {**metrics, WALL_KEY: time.monotonic() - started}  # this run's seconds (a skipped stage: its lookup)


def time_limit(params: Params, stage: str) -> float:
    """Seconds a stage instance may run in the flow: ``orchestration.stage_timeouts[stage]`` or the default.

    :func:`flows.stop_after.stop_after` enforces it in the stage's thread: the task fails with a timeout, is not
    retried, and its MLflow run is closed FAILED; outputs are written atomically, so nothing half-written is left
    behind. The stop lands between two Python steps of the stage (a long native call finishes first).
    """
    options = params.orchestration  # stage names are checked with the params (config.Params)
    return options.stage_timeouts.get(stage, options.stage_timeout_s)


def placement(gpu: bool, gpu_resource: str | None) -> AbstractContextManager[Any]:
    """Where a stage instance may run on Dask: a ``gpu`` stage needs one unit of ``gpu_resource``.

    Workers that own a GPU advertise it (``dask worker --resources "GPU=1"``); the scheduler then
    sends GPU stages only there, one per unit at a time (the concurrency limit), while CPU stages
    carry no restriction and run on any worker with a free thread (give GPU workers more threads
    than GPU units so CPU stages never queue behind a GPU stage). Without ``gpu_resource`` (or on the
    thread runner, where annotations mean nothing) nothing is restricted.
    """
    return dask.annotate(resources={gpu_resource: 1}) if gpu and gpu_resource else nullcontext()


def use_secret_block(name: str) -> str:
    """Put the project's secret key, kept in the Prefect ``Secret`` block ``name`` (64 hex digits), where the stages
    read it (the environment variable :data:`textsift.secret_key.ENV`); its fingerprint. The value is never logged."""
    from prefect.blocks.system import Secret

    os.environ[secret_key.ENV] = str(Secret.load(name).get())
    key = secret_key.load(Path("."))  # the variable wins: checks the value without writing anything
    assert key is not None
    return key.fingerprint


@flow(name="textsift-pipeline", on_failure=[notify_failure], on_crashed=[notify_failure])
def pipeline(root: str = ".", params_path: str | None = None, gpu_resource: str | None = None,
             force: bool = False, secret_block: str | None = None, slots: int | None = None) -> dict[str, Any]:
    """Run every stage instance in DAG order; returns the MLflow ids and per-stage metrics.

    An instance whose inputs (the registry's deps, its params, its code) and outputs are those of its
    last successful run is skipped, as ``dvc repro`` skips it (:mod:`textsift.stage_cache`); so a run
    after a failure resumes at the failed stage. ``force`` runs everything.
    ``gpu_resource``: the Dask worker resource that GPU stages need (see :func:`placement`).
    ``secret_block``: a Prefect ``Secret`` block holding the project's secret key (a deployment's way to
    pass it; Dask workers in other processes need ``TEXTSIFT_SECRET_KEY`` in their own environment).
    ``slots``: the task runner's workers; at most that many instances run at once, those that most others wait
    for first (:func:`flows.scheduling.submit_when_ready`; None: every ready instance is submitted at once).
    """
    logger = get_run_logger()
    root_path = Path(root).resolve()
    params_file = str(Path(params_path).resolve()) if params_path else str(root_path / "params.yaml")
    params = load_params(params_file)
    if secret_block:
        use_secret_block(secret_block)
    with disk_full_named(root_path, "the pipeline ran"), project_run(root_path, flow_run_id=str(runtime.flow_run.id)):
        fingerprint = secret_key.ensure(root_path).fingerprint  # a fresh project's key, made before any stage
        logger.info("secret key %s", fingerprint)
        for left in take_killed_runs(root_path):
            if left.get("flow_run_id"):
                logger.warning("%d Prefect runs of a killed earlier run (flow run %s) marked CRASHED",
                               mark_crashed(left["flow_run_id"]), left["flow_run_id"])
        tracker = Tracker(params.tracking, root_path)
        killed = tracker.end_orphaned_runs()
        if killed:
            logger.warning("%d MLflow runs of a killed earlier run marked KILLED", len(killed))
        run_name = parent_run_name(params.ingest.source, datetime.now())
        parent = tracker.start_run(run_name, tags={"textsift.runner": "prefect",
                                                   "textsift.key_fingerprint": fingerprint})
        tracker.log_params(parent, flatten(params))
        ok = False
        try:
            by_name = {inst.name: inst for inst in instances(params)}

            def submit(name: str, waits: list[Any]) -> Any:
                inst = by_name[name]
                with placement(inst.stage.gpu, gpu_resource):
                    return stage_task.submit(name, inst.stage.name, inst.key, str(root_path), params_file, parent,
                                             not force, time_limit(params, inst.stage.name), wait_for=waits)

            upstream = {name: [u.name for u in upstream_instances(inst, params)] for name, inst in by_name.items()}
            futures = submit_when_ready(list(by_name), upstream, submit, slots)
            metrics = {name: future.result() for name, future in futures.items()}
            times = stage_times({name: m.get(WALL_KEY, 0.0) for name, m in metrics.items()})
            tracker.log_metrics(parent, {f"time_s.{name.replace('@', '.')}": m.get(WALL_KEY, 0.0)
                                         for name, m in metrics.items()})  # MLflow names allow no '@'
            ok = True
        finally:
            tracker.end_run(parent, ok)
    create_markdown_artifact(
        summary_markdown(root_path, run_name, tracker.uri, tracker.experiment_id, parent), key=ARTIFACT_KEY,
        description="textsift pipeline run: its MLflow parent run, report and privacy-utility frontier")
    create_table_artifact(times, key=TIMES_KEY, description="seconds per stage instance in this run (slowest first)")
    logger.info("pipeline finished: %d stage instances; MLflow run %s at %s",
                len(metrics), parent, tracker.uri)
    return {"parent_run_id": parent, "tracking_uri": tracker.uri, "experiment_id": tracker.experiment_id,
            "metrics": metrics, "times": times}


DASK_ADDRESS_ENV = "TEXTSIFT_DASK_ADDRESS"  # a Dask scheduler's address: runs go to that cluster by default


def task_runner(kind: str, workers: int, address: str | None) -> Any:
    """The task runner for ``--task-runner``: threads (default) or Dask via prefect-dask."""
    if kind == "thread":
        return ThreadPoolTaskRunner(max_workers=workers)
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    processes = bool(os.environ.get("PREFECT_API_URL"))
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                          "processes": processes, "dashboard_address": None})


def main(argv: list[str] | None = None) -> int:
    """Run the pipeline flow from the command line and print where its runs, metrics and report are.

    Returns the exit status: 0, or 2 after printing a textsift error (e.g. another run holds the project).
    """
    parser = argparse.ArgumentParser(description="Run the textsift pipeline as a Prefect flow.")
    parser.add_argument("--root", default=".", help="project folder (default: current)")
    parser.add_argument("--params", default=None, help="params file (default: <root>/params.yaml)")
    parser.add_argument("--task-runner", choices=("thread", "dask"), default=None,
                        help=f"thread, or dask (the default when a scheduler address is given or ${DASK_ADDRESS_ENV} "
                             "is set)")
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--dask-address", default=os.environ.get(DASK_ADDRESS_ENV) or None,
                        help=f"scheduler address of an existing Dask cluster (default: ${DASK_ADDRESS_ENV})")
    parser.add_argument("--gpu-resource", default=None, help="Dask worker resource GPU stages need (e.g. GPU, "
                        "advertised by `dask worker --resources GPU=1`); only with --task-runner dask")
    parser.add_argument("--force", action="store_true", help="run every stage, even those whose inputs are unchanged")
    args = parser.parse_args(argv)
    args.task_runner = args.task_runner or ("dask" if args.dask_address else "thread")
    if args.gpu_resource and args.task_runner != "dask":
        parser.error("--gpu-resource routes stages on a Dask cluster: add --task-runner dask")
    runner = task_runner(args.task_runner, args.dask_workers, args.dask_address)
    try:
        check_no_run(Path(args.root).resolve())  # before the temporary API's start-up, not after it
        start_temporary_api()
        slots = None if args.dask_address else args.dask_workers  # a cluster of its own: its size is unknown here
        result = pipeline.with_options(task_runner=runner)(root=args.root, params_path=args.params,
                                                           gpu_resource=args.gpu_resource, force=args.force,
                                                           slots=slots)
    except TextsiftError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    root = Path(args.root).resolve()
    print(f"\nMLflow runs: {result['tracking_uri']} (experiment {result['experiment_id']}, "
          f"parent run {result['parent_run_id']})")
    print("  browse them: make mlflow-ui  ->  http://127.0.0.1:5000")
    print(f"Metrics: {root / 'metrics'}  (dvc metrics show)")
    print(f"Utility table: {root / catalog_path('utility_table')}")
    print(f"Frontier: {root / catalog_path('frontier')}")
    print(f"Report: {root / catalog_path('report')}")
    print("\n".join(proposal_lines(root, result["parent_run_id"])))
    print("Time per stage (this run; stages run side by side):")
    print("\n".join(stage_time_lines(result["times"])))
    return 0


if __name__ == "__main__":
    # the importable module's flow: Dask pickles tasks by reference, and `__main__.stage_task` is no task a worker
    # can import (PicklingError: "it's not the same object as __main__.stage_task")
    from flows.pipeline import main as importable_main

    sys.exit(importable_main())
