"""A stage waiting for a long upstream never holds a worker: ready work runs beside the long stage.

Real Prefect flows on two worker threads. ``long`` can only finish once ``free`` has run; ``after_long`` waits
for ``long`` and comes before ``free`` in the submission order. Submitted all at once with ``wait_for``,
``after_long`` takes the second thread and blocks on ``long`` while ``free`` queues behind it (so ``long`` times
out); submitted when ready, ``free`` gets that thread.
"""

from __future__ import annotations

import threading

import pytest
from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner

from flows.scheduling import submit_when_ready

pytestmark = pytest.mark.integration
ORDER = ["long", "after_long", "free"]
UPSTREAM = {"after_long": ["long"]}


@task(task_run_name="{name}")
def step(name: str, events: dict[str, threading.Event]) -> bool:
    """``long`` reports whether ``free`` ran while it was running; the others mark that they ran."""
    if name == "long":
        return events["free"].wait(timeout=10)
    if name == "after_long":
        assert events["free"].is_set()
    events[name].set()
    return True


@flow(task_runner=ThreadPoolTaskRunner(max_workers=2))
def when_ready() -> dict[str, bool]:
    events = {name: threading.Event() for name in ORDER}
    futures = submit_when_ready(ORDER, UPSTREAM, lambda name, waits: step.submit(name, events, wait_for=waits))
    return {name: future.result() for name, future in futures.items()}


def test_ready_work_runs_beside_a_long_stage() -> None:
    assert when_ready() == {"long": True, "after_long": True, "free": True}


@task
def fails() -> None:
    raise RuntimeError("upstream failed")


@task
def never() -> None:
    raise AssertionError("a stage whose upstream failed ran")


@flow(task_runner=ThreadPoolTaskRunner(max_workers=2))
def upstream_fails() -> dict[str, str]:
    tasks = {"a": fails, "b": never}
    futures = submit_when_ready(["a", "b"], {"b": ["a"]}, lambda name, waits: tasks[name].submit(wait_for=waits))
    return {name: future.state.type.value for name, future in futures.items()}


def test_a_failed_upstream_leaves_its_downstream_not_run() -> None:
    assert upstream_fails() == {"a": "FAILED", "b": "PENDING"}  # Prefect's NotReady state: never started


def test_an_order_that_is_not_topological_is_an_error() -> None:
    with pytest.raises(ValueError, match="never run"):
        submit_when_ready(["b"], {"b": ["a"]}, lambda name, waits: pytest.fail("nothing is ready"))
