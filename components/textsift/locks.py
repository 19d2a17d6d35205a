"""Cross-process locks on shared project state: caches, the MLflow sqlite store, whole runs.

Prefect runs stage tasks side by side in threads, Dask workers and separate processes, and
users start runs from cron and shells at the same time. Every piece of state they share is
guarded by an OS file lock (``flock`` through ``filelock``): it is released by the kernel when
its holder dies, even under ``kill -9``, so a crashed run never leaves a lock behind.

``project_run`` is the lock of one pipeline run in one project folder: a second run started
there fails at once with ``RunInProgressError`` naming the holder, instead of racing the first
one over the same outputs and tracking store.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from textsift.errors import TextsiftError

STATE_DIR = ".textsift"  # project-local state: caches, locks, the record of the running run
RUN_LOCK = f"{STATE_DIR}/run.lock"
RUN_RECORD = f"{STATE_DIR}/run.json"
KILLED_RUNS = f"{STATE_DIR}/killed-runs.json"  # what killed runs' records said, until a flow run has handled them


class RunInProgressError(TextsiftError):
    """Another textsift run holds this project's run lock."""


def exclusive(path: str | Path, timeout: float = -1) -> FileLock:
    """A blocking (by default) OS lock on ``path``; the lock file's folder is created.

    Each call returns a new lock object, so two threads of one process exclude each other as
    two processes do (``flock`` locks belong to the open file, not to the process).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path), timeout=timeout)


def process_identity(pid: int | None = None) -> str:
    """``host:pid:start`` of a process: unique even after the pid is reused."""
    import psutil

    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{psutil.Process(pid).create_time():.2f}"


def is_alive(identity: str) -> bool | None:
    """Whether the process named by ``process_identity`` still runs; None if it ran on another host."""
    import psutil

    host, pid, started = identity.rsplit(":", 2)
    if host != socket.gethostname():
        return None
    try:
        return f"{psutil.Process(int(pid)).create_time():.2f}" == started
    except (psutil.NoSuchProcess, ValueError):
        return False


def read_run_record(root: Path) -> dict:
    """What the current (or last killed) run wrote about itself; {} when nothing."""
    try:
        return json.loads((root / RUN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _holder(root: Path) -> str:
    record = read_run_record(root)
    if not record:
        return "another process"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.get("started", 0)))
    return f"pid {record.get('owner', '?').rsplit(':', 2)[-2]} since {started}"


def _acquire_run_lock(root: Path) -> FileLock:
    lock = exclusive(root / RUN_LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunInProgressError(
            f"a textsift run is in progress in {root} ({_holder(root)}): wait for it to finish "
            f"or stop it; the lock is {root / RUN_LOCK}"
        ) from None
    return lock


def check_no_run(root: str | Path) -> None:
    """Raise ``RunInProgressError`` now if a run holds the project (a fast check before start-up)."""
    _acquire_run_lock(Path(root)).release()


@contextmanager
def project_run(root: str | Path, **about: str) -> Iterator[dict]:
    """Hold the project's run lock; yield the run record (kept in ``RUN_RECORD`` while it runs).

    ``about`` adds to the record (the Prefect flow run's id). A record found under the lock was left by a run
    that was killed (a finished run removes its own): it is moved to ``KILLED_RUNS``, whatever takes the lock
    next (a flow, ``textsift stage``, an ad-hoc command), until a flow run handles it (:func:`take_killed_runs`).

    Raises:
        RunInProgressError: another run holds the lock; the message says which process.
    """
    root = Path(root)
    lock = _acquire_run_lock(root)
    try:
        left = read_run_record(root)
        if left:
            (root / KILLED_RUNS).write_text(json.dumps([*_killed(root), left]), encoding="utf-8")
        record = {"owner": process_identity(), "started": time.time(), **about}
        (root / RUN_RECORD).write_text(json.dumps(record), encoding="utf-8")
        yield record
    finally:
        (root / RUN_RECORD).unlink(missing_ok=True)
        lock.release()


def _killed(root: Path) -> list[dict]:
    try:
        return json.loads((root / KILLED_RUNS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []


def take_killed_runs(root: str | Path) -> list[dict]:
    """The records killed runs left (oldest first), removed as they are handed over; call holding the lock."""
    found = _killed(Path(root))
    (Path(root) / KILLED_RUNS).unlink(missing_ok=True)
    return found
