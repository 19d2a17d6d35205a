"""textsift's recall margin over another tool: the paired difference on the same gold mentions and its interval."""

from __future__ import annotations

import numpy as np
import pytest

from textsift.corpus import Span
from textsift.detection.scoring import detection_scores
from textsift.evaluation.recall_margin import found_mentions, recall_margin


def _mentions(n: int, ours: int, theirs: int, both: int) -> tuple[list[list[Span]], ...]:
    """``n`` one-mention texts: ``both`` found by both tools, then ``ours - both`` by ours alone, then
    ``theirs - both`` by theirs alone, the rest by neither."""
    gold = [[Span(0, 4, "PERSON")] for _ in range(n)]
    hit = [Span(0, 4, "PERSON")]
    ours_found = [hit if k < ours else [] for k in range(n)]
    theirs_found = [hit if k < both or ours <= k < ours + theirs - both else [] for k in range(n)]
    return gold, ours_found, theirs_found


def test_found_mentions_are_the_overlap_recalls_hits() -> None:
    gold = [[Span(0, 3, "PERSON"), Span(10, 16, "LOC")], [Span(2, 9, "PERSON")]]
    found = [[Span(0, 4, "PERSON"), Span(10, 12, "LOC")], [Span(2, 9, "LOC")]]
    assert found_mentions(gold, found, "PERSON") == [True, False]
    assert found_mentions(gold, found, "LOC") == [False]  # 2 of 6 characters: under half
    hits = found_mentions(gold, found, "PERSON")
    assert sum(hits) / len(hits) == detection_scores(gold, found)["PERSON.overlap.recall"]


def test_a_recall_margin_is_the_difference_with_a_paired_interval_that_narrows_with_more_mentions() -> None:
    few = recall_margin(*_mentions(100, ours=80, theirs=60, both=55), "PERSON", 2000, np.random.default_rng(3))
    assert few.margin == pytest.approx(0.2) and few.support == 100
    assert few.low < 0.2 < few.high
    # the paired difference d in {-1, 0, 1}: its standard error sqrt(var(d) / n); the interval ~ +-1.96 of it
    d = np.array([1] * 25 + [-1] * 5 + [0] * 70)
    assert (few.high - few.low) / 2 == pytest.approx(1.96 * d.std() / np.sqrt(100), rel=0.15)
    many = recall_margin(*_mentions(1000, ours=800, theirs=600, both=550), "PERSON", 2000, np.random.default_rng(3))
    assert many.margin == pytest.approx(0.2)
    assert (many.high - many.low) == pytest.approx((few.high - few.low) / np.sqrt(10), rel=0.2)


def test_a_recall_margin_of_one_tool_against_itself_is_zero_and_certain_and_of_no_mention_is_empty() -> None:
    gold, ours, _ = _mentions(50, ours=30, theirs=0, both=0)
    same = recall_margin(gold, ours, ours, "PERSON", 2000, np.random.default_rng(0))
    assert (same.margin, same.low, same.high, same.support) == (0.0, 0.0, 0.0, 50)
    assert recall_margin(gold, ours, ours, "LOC", 2000, np.random.default_rng(0)).support == 0
