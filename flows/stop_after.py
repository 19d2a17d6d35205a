"""A stage's time limit in the flow, enforced in the stage's own thread, without Prefect's thread timeout.

Prefect's ``timeout_seconds`` on a task that runs in a worker thread logs a warning on every task run
("Timeouts in worker threads cannot interrupt blocking operations") and, like this module, can only stop
the thread at its next Python step. ``stop_after`` does the same without the noise: a timer raises
:class:`StageTimeLimitError` in the stage's thread once the limit has passed; the stage's MLflow run closes
FAILED and its outputs, written atomically, are never half-written. A long native call (one big matrix
product) finishes first. Running each stage in a subprocess would make the stop immediate but costs every
stage ~7 s of imports (2.5 minutes of a 21-stage ``make run``); the limits are hours, so the next Python
step is soon enough.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimeLimitError(TimeoutError):
    """A stage ran past ``orchestration.stage_timeouts`` (a TimeoutError: the flow never retries it)."""


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Queue ``exc`` for the thread's next Python step (None: withdraw one queued and not yet raised)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None)


@contextmanager
def stop_after(seconds: float | None) -> Iterator[None]:
    """Raise :class:`StageTimeLimitError` in this thread if the block is still running after ``seconds``."""
    if seconds is None:
        yield
        return
    thread_id, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                _raise_in(thread_id, StageTimeLimitError)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except StageTimeLimitError:
        raise StageTimeLimitError(f"the stage ran past its time limit of {seconds:g} s (timeout); "
                                  "raise orchestration.stage_timeouts to give it longer") from None
    finally:
        with lock:
            state["done"] = True
            if state["fired"]:  # fired as the block ended: withdraw it, or it lands in code after a finished stage
                _raise_in(thread_id, None)
        timer.cancel()
