"""The embedded MLflow sqlite store under concurrent and killed processes (real MLflow)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from textsift.config import TrackingParams
from textsift.tracking import OWNER_TAG, Tracker, resolve_uri

pytestmark = pytest.mark.integration


def _open_store(root: str, barrier) -> str:
    barrier.wait()  # every process opens the new store at the same moment
    tracker = Tracker(TrackingParams(), Path(root))
    run = tracker.start_run("probe")
    tracker.end_run(run, True)
    return run


def test_processes_opening_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(3)
    with context.Pool(3) as pool:
        runs = pool.starmap(_open_store, [(str(tmp_path), barrier)] * 3)
    client = MlflowClient(resolve_uri(TrackingParams(), tmp_path))
    assert {client.get_run(r).info.status for r in runs} == {"FINISHED"}
    assert len(set(runs)) == 3


def test_a_store_left_half_migrated_is_repaired(tmp_path: Path) -> None:
    Tracker(TrackingParams(), tmp_path)
    with sqlite3.connect(tmp_path / "mlruns.db") as db:  # what a migration killed half way leaves
        db.execute("CREATE TABLE _alembic_tmp_experiments (x INTEGER)")
    tracker = Tracker(TrackingParams(), tmp_path)
    tracker.end_run(tracker.start_run("after"), True)
    with sqlite3.connect(tmp_path / "mlruns.db") as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not any(name.startswith("_alembic_tmp_") for name in names)


KILLED_OWNER = """
import sys, time
from pathlib import Path
from textsift.config import TrackingParams
from textsift.tracking import Tracker
tracker = Tracker(TrackingParams(), Path(sys.argv[1]))
print(tracker.start_run("doomed"), flush=True)
time.sleep(600)
"""


def test_runs_of_a_killed_process_end_as_killed_and_live_ones_stay(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED_OWNER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    doomed = proc.stdout.readline().strip()
    tracker = Tracker(TrackingParams(), tmp_path)
    live = tracker.start_run("live")
    assert tracker.end_orphaned_runs() == []  # its owner still runs
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.1)
    assert tracker.end_orphaned_runs() == [doomed]
    client = tracker.client
    assert client.get_run(doomed).info.status == "KILLED"
    assert client.get_run(live).info.status == "RUNNING"
    assert client.get_run(live).data.tags[OWNER_TAG].split(":")[1] == str(os.getpid())
