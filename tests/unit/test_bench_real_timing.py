"""The real-text bench times each tool several times and reads speed from the fastest run."""

import pytest

from bench.detector_real import timed_runs
from textsift.corpus import Span


def test_every_run_is_timed_and_the_spans_are_the_tools():
    calls = []

    def tool(texts):
        calls.append(list(texts))
        return [[Span(0, len(t), "PERSON")] for t in texts]

    found, times = timed_runs(tool, ["Ann", "Bo"], repeats=3)
    assert found == [[Span(0, 3, "PERSON")], [Span(0, 2, "PERSON")]]
    assert len(times) == 3 and all(t >= 0 for t in times)
    assert calls == [["Ann", "Bo"]] * 3


def test_a_tool_that_finds_different_spans_on_a_second_run_is_refused():
    runs = iter([[[Span(0, 3, "PERSON")]], [[Span(0, 2, "PERSON")]]])
    with pytest.raises(RuntimeError, match="different spans"):
        timed_runs(lambda texts: next(runs), ["Ann"], repeats=2)


def test_at_least_one_run():
    found, times = timed_runs(lambda texts: [[]], ["x"], repeats=0)
    assert found == [[]] and len(times) == 1
