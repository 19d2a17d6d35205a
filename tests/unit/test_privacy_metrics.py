"""The leak and token-change metrics on hand-made cases (the same code serves every mechanism)."""

from __future__ import annotations

import pytest

from textsift.corpus import Span
from textsift.evaluation.privacy import leak_rates, span_leaks, token_change_fraction
from textsift.tokenize import replace_tokens, words

ORIGINAL = "Call Ann Lee at 555-0101 in Boston today."
SPANS = (Span(5, 12, "PERSON"), Span(16, 24, "PHONE"), Span(28, 34, "CITY"))


def _leaks(privatized: str) -> list[tuple[str, bool, float]]:
    return span_leaks(ORIGINAL, SPANS, privatized)


def test_spans_are_what_they_claim() -> None:
    assert [ORIGINAL[s.start:s.end] for s in SPANS] == ["Ann Lee", "555-0101", "Boston"]


def test_kept_entities_leak() -> None:
    assert _leaks(ORIGINAL) == [("PERSON", True, 1.0), ("PHONE", True, 1.0), ("CITY", True, 1.0)]


def test_partially_kept_entity_does_not_leak_whole_but_counts_its_words() -> None:
    person, phone, city = _leaks("Call Ann Smith at [MASK] in Denver today.")
    assert person == ("PERSON", False, 0.5)
    assert phone == ("PHONE", False, 0.0) and city == ("CITY", False, 0.0)


def test_moved_and_recased_entities_still_leak() -> None:
    person, _, city = _leaks("BOSTON today: call ann   lee.")
    assert person == ("PERSON", True, 1.0) and city == ("CITY", True, 1.0)


def test_substring_of_another_word_is_not_a_leak() -> None:
    _, _, city = _leaks("Call them in Bostonian style.")
    assert city == ("CITY", False, 0.0)


def test_corpus_rates_per_label() -> None:
    rates = leak_rates([ORIGINAL, ORIGINAL], [SPANS, SPANS], [ORIGINAL, "Call [MASK] at x in y."])
    assert rates["leak.spans"] == 6
    assert rates["leak.rate"] == pytest.approx(0.5)
    assert rates["leak.rate.PERSON"] == rates["leak.rate.CITY"] == pytest.approx(0.5)
    assert leak_rates([ORIGINAL], [()], [ORIGINAL]) == {"leak.spans": 0.0}


def test_token_change_fraction() -> None:
    assert token_change_fraction("a b c d", "a b c d") == 0.0
    assert token_change_fraction("a b c d", "a x c y") == pytest.approx(0.5)
    assert token_change_fraction("a b c d", "A B C D") == 0.0  # case folding
    assert token_change_fraction("", "anything") == 0.0


def test_replace_tokens_keeps_the_text_between_words() -> None:
    text = "Hi, Ann!  See you  at 5."
    tokens = words(text)
    assert replace_tokens(text, tokens, {1: "Bob", 4: None}) == "Hi, Bob!  See you  5."


def test_attacker_recall_counts_original_spans_the_detector_finds_again() -> None:
    from textsift.evaluation.privacy import attacker_recall

    moved = "In boston today, call ANN LEE at [PHONE]."
    detected = [Span(3, 9, "LOC"), Span(22, 29, "PERSON"), Span(33, 40, "PHONE")]  # '[PHONE]' is no phone number
    metrics = attacker_recall([ORIGINAL], [SPANS], [moved], [detected])
    assert metrics == {"attacker.recall": 2 / 3, "attacker.recall.CITY": 1.0, "attacker.recall.PERSON": 1.0,
                       "attacker.recall.PHONE": 0.0}
    assert attacker_recall([ORIGINAL], [SPANS], [ORIGINAL], [[]])["attacker.recall"] == 0.0
    assert attacker_recall([ORIGINAL], [[]], [ORIGINAL], [[]]) == {}
