"""Submit each stage instance to the task runner once the instances it waits for have finished.

Submitting every instance at once, each with ``wait_for`` its upstream futures, costs a worker per waiting
task: Prefect's thread runner blocks a worker thread on a task's ``wait_for`` until its upstream ends, in
submission order. On the default two threads, ``detect`` (waiting for ``train_detectors``) took the thread
``train_fill_in`` freed and held it for the whole detector and interest training, while the indexes and the
settings that need neither model were ready and waited behind it (8.4 minutes with one thread idle in a cold
``make run``). Here an instance is submitted only when every upstream future is final, so a worker only ever
takes work it can do. The upstream futures still go in ``wait_for``: Prefect records the edges, and an
instance whose upstream failed ends ``NotReady`` at once, as before.

Given the runner's number of workers (``slots``), at most that many instances are submitted at a time, and the
ready instance with the most instances downstream of it goes first: a runner's queue is first come, first served,
so an instance that many others wait for (``detect``, then ``lrp_budgets`` and its six ``embedding_dp``) queued
behind settings that only ``evaluate`` waits for (the 70-second ``privatize@ds_rake``). Replaying the stage times
of a cold and of a warm ``make run`` on two workers predicted 52 s and 26 s less (790 -> 738 s, 427 -> 401 s); in
real runs ``evaluate`` started 17 s and 11 s sooner. The order never holds a worker back: ``train_interests``, which
needs no input, takes the second worker while ``ingest`` runs, and ``train_fill_in`` then waits for a training.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prefect.futures import PrefectFuture, as_completed


def submit_when_ready(
    order: Sequence[str], upstream: Mapping[str, Sequence[str]],
    submit: Callable[[str, list[PrefectFuture[Any]]], PrefectFuture[Any]], slots: int | None = None,
) -> dict[str, PrefectFuture[Any]]:
    """Submit every name of ``order`` (a topological order) once each of its ``upstream`` names has finished.

    ``submit(name, wait_for)`` submits one instance, given its upstream futures (all final by then). Ready
    instances go most-downstream first, ties in ``order``'s order; with ``slots``, at most that many are
    submitted and unfinished at a time (None: every ready one at once). Returns every future by name, when all
    of them are final.

    Raises:
        ValueError: ``order`` is not topological (an upstream name that never comes before), or ``slots`` < 1.
    """
    if slots is not None and slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots}")
    downstream = downstream_of(order, upstream)
    rank = {name: (-len(downstream[name]), position) for position, name in enumerate(order)}
    futures: dict[str, PrefectFuture[Any]] = {}
    finished: set[str] = set()
    waiting = list(order)
    running: dict[PrefectFuture[Any], str] = {}
    while waiting or running:
        ready = sorted((name for name in waiting if all(u in finished for u in upstream.get(name, ()))),
                       key=rank.__getitem__)
        for name in ready[:len(ready) if slots is None else slots - len(running)]:
            waiting.remove(name)
            futures[name] = submit(name, [futures[u] for u in upstream.get(name, ())])
            running[futures[name]] = name
        if not running:
            raise ValueError(f"these stage instances wait for ones that never run: {sorted(waiting)}")
        done = next(as_completed(list(running)))
        finished.add(running.pop(done))
    return futures


def downstream_of(order: Sequence[str], upstream: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """Every name of ``order`` (topological) with the names that wait for it, directly or not."""
    downstream: dict[str, set[str]] = {name: set() for name in order}
    for name in reversed(order):
        for u in upstream.get(name, ()):
            if u in downstream:
                downstream[u] |= {name} | downstream[name]
    return downstream
