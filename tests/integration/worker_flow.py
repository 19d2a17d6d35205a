"""The flow a process worker runs in ``test_prefect_worker.py``: two real stages side by side with two tasks
that only log, so every task run's Prefect log can be checked for lines of another.

Loaded by the worker's flow-run process from this file (the deployment's entrypoint), after Prefect configured
its logging: the situation where the per-task forwarders misfiled 23 of 43 stage lines.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from prefect import flow, task
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

from flows.pipeline import stage_task, textsift_logs_to_prefect
from textsift.config import load_params
from textsift.tracking import Tracker

STAGES = ("key", "ingest")  # no stage reads the other's output: they run side by side
TALKERS = ("alpha", "beta")
LINES = 15


@task(task_run_name="{name}")
def chatty(name: str) -> None:
    with textsift_logs_to_prefect():
        for i in range(LINES):
            logging.getLogger("textsift").info("line %s-%d", name, i)
            time.sleep(0.02)  # the tasks' lines interleave


@flow(name="textsift-worker-logs", task_runner=ThreadPoolTaskRunner(max_workers=len(STAGES) + len(TALKERS)))
def stages_side_by_side(root: str) -> None:
    params_file = str(Path(root) / "params.yaml")
    tracker = Tracker(load_params(params_file).tracking, Path(root))
    parent = tracker.start_run("worker-logs")
    futures = [stage_task.submit(name, name, None, root, params_file, parent, False) for name in STAGES]
    futures += [chatty.submit(name) for name in TALKERS]
    wait(futures)
    tracker.end_run(parent, all(future.state.is_completed() for future in futures))
    for future in futures:
        future.result()
