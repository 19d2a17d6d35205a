"""The real-text bench times each tool several times and reads speed from the fastest run, and states textsift's
margin over Presidio with the mentions it rests on."""

import pytest

from bench.detector_real import margin_figures, timed_runs
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


def test_a_margin_figure_per_marked_type_with_mentions_carries_its_interval_and_support():
    gold = [[Span(0, 3, "PERSON"), Span(5, 9, "LOC")], [Span(0, 4, "PERSON")]]
    ours = [[Span(0, 3, "PERSON"), Span(5, 9, "LOC")], [Span(0, 4, "PERSON")]]
    presidio = [[Span(0, 3, "PERSON")], [Span(0, 4, "ORG")]]
    figures = {f.name: f for f in margin_figures(gold, ours, presidio, ("PERSON", "LOC", "ORG"), "real.x", "cpu")}
    assert set(figures) == {"detector.real.x.margin_over_presidio.PERSON", "detector.real.x.margin_over_presidio.LOC"}
    person = figures["detector.real.x.margin_over_presidio.PERSON"]
    assert person.value == pytest.approx(0.5) and person.params["support"] == 2
    low, high = person.params["ci95"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert figures["detector.real.x.margin_over_presidio.LOC"].params["ci95"] == [1.0, 1.0]
