"""Per-type thresholds chosen on held-out annotated text (textsift.detection.calibration)."""

from __future__ import annotations

import pytest

from textsift.corpus import Span
from textsift.detection.calibration import choose, type_curve
from textsift.detection.recognizers.base import Detection

# one text: "Ann Lee met Acme Corp in Oslo" with gold PERSON 0-7, ORG 12-21, LOC 25-29
GOLD = [[Span(0, 7, "PERSON"), Span(12, 21, "ORG"), Span(25, 29, "LOC")]]


def _d(start: int, end: int, label: str, score: float) -> Detection:
    return Detection(start, end, label, score, "model")


FOUND = [[_d(0, 7, "PERSON", 0.9), _d(8, 11, "PERSON", 0.3),  # "met" as a name: a false positive at 0.3
          _d(12, 21, "ORG", 0.2), _d(25, 29, "ORG", 0.6)]]  # the ORG is found at 0.2; "Oslo" as an ORG at 0.6


def test_a_type_curve_counts_characters_at_each_threshold() -> None:
    curve = dict((t, (p, r)) for t, p, r in type_curve(GOLD, FOUND, "PERSON", (0.1, 0.5, 0.95)))
    assert curve[0.1] == (7 / 10, 1.0)  # "Ann Lee" and "met": 7 of 10 characters inside gold
    assert curve[0.5] == (1.0, 1.0)
    assert curve[0.95] == (0.0, 0.0)  # nothing predicted: no precision, so no target is met by finding nothing
    # an ORG over LOC's gold characters is precise (a hidden character is hidden whatever its label), not recall
    org = dict((t, (p, r)) for t, p, r in type_curve(GOLD, FOUND, "ORG", (0.1, 0.5)))
    assert org[0.1] == (1.0, 1.0) and org[0.5] == (1.0, 0.0)
    silent = choose(type_curve(GOLD, FOUND, "PERSON", (0.1, 0.95)), 0.8)
    assert (silent.threshold, silent.reached) == (0.1, False)  # 0.95 finds nothing: not a precise threshold


def test_the_lowest_threshold_reaching_the_target_is_chosen_else_the_most_precise() -> None:
    curve = [(0.1, 0.6, 0.9), (0.3, 0.85, 0.8), (0.5, 0.92, 0.6), (0.7, 0.95, 0.4), (0.9, 0.95, 0.1)]
    chosen = choose(curve, 0.9)
    assert (chosen.threshold, chosen.char_recall, chosen.reached) == (0.5, 0.6, True)
    assert choose(curve, 0.8).threshold == 0.3
    unreachable = choose(curve, 0.99)
    assert (unreachable.threshold, unreachable.reached) == (0.7, False)  # the most precise, the lower of a tie


def test_a_recall_target_takes_the_highest_threshold_keeping_it_else_the_lowest() -> None:
    curve = [(0.1, 0.6, 0.9), (0.3, 0.85, 0.8), (0.5, 0.92, 0.6), (0.7, 0.95, 0.4), (0.9, 0.95, 0.1)]
    chosen = choose(curve, 0.8, "recall")
    assert (chosen.threshold, chosen.char_precision, chosen.reached) == (0.3, 0.85, True)
    assert choose(curve, 0.05, "recall").threshold == 0.9
    assert (choose(curve, 0.95, "recall").threshold, choose(curve, 0.95, "recall").reached) == (0.1, False)

    with pytest.raises(ValueError, match="1 gold span lists for 0"):
        type_curve(GOLD, [], "PERSON")


def test_a_recall_target_holds_on_every_corpus_a_precision_target_on_them_pooled() -> None:
    """Corpus A finds its name at 0.9, corpus B only at 0.3: recall 1 on both needs 0.3 (pooled, 0.9 gives half)."""
    from textsift.detection.calibration import calibrate

    gold = [[Span(0, 7, "PERSON")]]
    corpus_a = (gold, [[_d(0, 7, "PERSON", 0.9)]])
    corpus_b = (gold, [[_d(0, 7, "PERSON", 0.3), _d(8, 11, "PERSON", 0.25)]])
    chosen = calibrate([corpus_a, corpus_b], "PERSON", 0.9, "recall", (0.1, 0.3, 0.5, 0.9))
    assert (chosen.threshold, chosen.char_recall, chosen.reached) == (0.3, 1.0, True)
    pooled = calibrate([corpus_a, corpus_b], "PERSON", 0.5, "recall", (0.1, 0.3, 0.5, 0.9))
    assert pooled.threshold == 0.3  # not 0.9, where the pooled recall is 0.5: B would keep nothing
    precise = calibrate([corpus_a, corpus_b], "PERSON", 1.0, "precision", (0.1, 0.3, 0.5, 0.9))
    assert (precise.threshold, precise.char_precision) == (0.3, 1.0)  # "met" at 0.25 stays out at 0.3
    no_gold = ([[]], [[_d(0, 3, "PERSON", 0.99)]])
    assert calibrate([corpus_a, no_gold], "PERSON", 0.9, "recall", (0.1, 0.9)).threshold == 0.9  # B marks no name
