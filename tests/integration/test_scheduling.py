"""A stage waiting for a long upstream never holds a worker: ready work runs beside the long stage.

Real Prefect flows on two worker threads. ``long`` can only finish once ``free`` has run; ``after_long`` waits
for ``long`` and comes before ``free`` in the submission order. Submitted all at once with ``wait_for``,
``after_long`` takes the second thread and blocks on ``long`` while ``free`` queues behind it (so ``long`` times
out); submitted when ready, ``free`` gets that thread. With ``slots``, at most that many run at once, the one that
most others wait for first.
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


# ``head`` comes after two leaves in the order, but two instances wait for it: with two slots it starts at once
PRIORITY_ORDER = ["leaf1", "leaf2", "head", "tail1", "tail2"]
PRIORITY_UPSTREAM = {"tail1": ["head"], "tail2": ["head"]}


@task(task_run_name="{name}")
def logged(name: str, log: list[tuple[str, str]], lock: threading.Lock) -> None:
    with lock:
        log.append(("start", name))
    threading.Event().wait(0.3)  # long enough for a third task to start beside these, were it submitted
    with lock:
        log.append(("end", name))


@flow(task_runner=ThreadPoolTaskRunner(max_workers=4))
def with_slots(slots: int) -> list[tuple[str, str]]:
    log: list[tuple[str, str]] = []
    lock = threading.Lock()
    futures = submit_when_ready(PRIORITY_ORDER, PRIORITY_UPSTREAM,
                                lambda name, waits: logged.submit(name, log, lock, wait_for=waits), slots)
    for future in futures.values():
        future.result()
    return log


def test_with_slots_the_instance_most_others_wait_for_starts_first_and_no_more_run_at_once() -> None:
    log = with_slots(2)
    starts = [name for event, name in log if event == "start"]
    assert set(starts[:2]) == {"head", "leaf1"}  # not leaf2, which comes before head in the order
    running, most = 0, 0
    for event, _ in log:
        running += 1 if event == "start" else -1
        most = max(most, running)
    assert most == 2 and sorted(starts) == sorted(PRIORITY_ORDER)  # the runner had 4 threads: the slots held


def test_slots_must_be_positive() -> None:
    with pytest.raises(ValueError, match="slots"):
        submit_when_ready(["a"], {}, lambda name, waits: pytest.fail("nothing runs"), slots=0)


def test_an_order_that_is_not_topological_is_an_error() -> None:
    with pytest.raises(ValueError, match="never run"):
        submit_when_ready(["b"], {"b": ["a"]}, lambda name, waits: pytest.fail("nothing is ready"))
