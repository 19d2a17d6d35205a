"""A stage's time limit stops it mid-run, in its own thread, and never touches a block that finished."""

from __future__ import annotations

import time

import pytest

from flows.stop_after import StageTimeLimitError, stop_after


def test_a_running_python_loop_is_stopped_at_the_limit() -> None:
    started = time.monotonic()
    with pytest.raises(StageTimeLimitError, match="time limit of 0.2 s"):
        with stop_after(0.2):
            while True:
                sum(range(1000))
    assert 0.15 < time.monotonic() - started < 5


def test_a_finished_block_is_left_alone_and_no_limit_means_none() -> None:
    with stop_after(0.1):
        pass
    time.sleep(0.3)  # the timer would have fired here
    with stop_after(None):
        time.sleep(0.01)


def test_it_is_a_timeout_the_flow_does_not_retry() -> None:
    from flows.pipeline import _retry_transient

    class State:
        def result(self) -> None:
            raise StageTimeLimitError("past")

    assert issubclass(StageTimeLimitError, TimeoutError) and _retry_transient(None, None, State()) is False
