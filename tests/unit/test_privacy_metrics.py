"""The leak and token-change metrics on hand-made cases (the same code serves every mechanism)."""

from __future__ import annotations

import pytest

from textsift.corpus import Span
from textsift.evaluation.privacy import leak_rates, span_leaks, token_change_fraction
from textsift.tokenize import replace_tokens, words

ORIGINAL = "Call Ann Lee at 555-0101 in Boston today."
SPANS = tuple(Span(ORIGINAL.index(value), ORIGINAL.index(value) + len(value), label)
              for value, label in (("Ann Lee", "PERSON"), ("555-0101", "PHONE"), ("Boston", "CITY")))


def _leaks(privatized: str) -> list[tuple[str, bool, float]]:
    return span_leaks(ORIGINAL, SPANS, privatized)


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
    assert replace_tokens(text, tokens, {1: "Bob", 4: None}) == "Hi, Bob!  See you   5."  # a dropped word's spaces stay


def test_attacker_recall_counts_original_spans_the_detector_finds_again() -> None:
    from textsift.evaluation.privacy import attacker_recall

    moved = "In boston today, call ANN LEE at [PHONE]."
    detected = [Span(3, 9, "LOC"), Span(22, 29, "PERSON"), Span(33, 40, "PHONE")]  # '[PHONE]' is no phone number
    metrics = attacker_recall([ORIGINAL], [SPANS], [moved], [detected])
    assert metrics == {"attacker.recall": 2 / 3, "attacker.recall.CITY": 1.0, "attacker.recall.PERSON": 1.0,
                       "attacker.recall.PHONE": 0.0, "attacker.recall.direct": 0.5, "attacker.recall.quasi": 1.0}
    assert attacker_recall([ORIGINAL], [SPANS], [ORIGINAL], [[]])["attacker.recall"] == 0.0
    assert attacker_recall([ORIGINAL], [[]], [ORIGINAL], [[]]) == {}


def _doc(text: str, *names: str) -> tuple[str, list[Span]]:
    spans = []
    for name in names:
        start = text.index(name)
        spans.append(Span(start, start + len(name), "PERSON"))
    return text, spans


def test_a_document_that_receives_another_documents_surname_is_flagged() -> None:
    """The span leak rate only looks at a document's own spans: Okafor in Ann's document leaks Maria Okafor."""
    from textsift.evaluation.privacy import cross_document_flags, cross_document_rate, name_parts

    corpus = [_doc("Ann Lee called about the invoice.", "Ann Lee"),
              _doc("Maria Okafor asked for a refund.", "Maria Okafor"),
              _doc("Jo van Dam wrote twice.", "Jo van Dam"),
              _doc("Nobody named here mentions the Lee report.")]
    texts, spans = [t for t, _ in corpus], [s for _, s in corpus]
    stop = {"van", "the"}
    assert name_parts(*corpus[2], stop) == {"dam"}  # "jo" is too short, "van" a stop word
    published = ["Ann Okafor called about the invoice.",  # another document's surname: flagged
                 "Maria Okafor asked for a refund.",  # keeps its OWN name: the leak rate's business, not counted here
                 "Jo Van wrote twice, said Dam.",  # only its own name parts and a stop word
                 "Nobody named here mentions the Lee report."]  # "Lee" was already in its original: not received
    assert cross_document_flags(texts, spans, published, stop) == [True, False, False, False]
    maria = ["Someone called about the invoice.", "Someone asked for a refund.", "MARIA wrote twice.", texts[3]]
    assert cross_document_flags(texts, spans, maria, stop) == [False, False, True, False]  # case-folded, whole word
    assert cross_document_flags(texts, spans, ["Annalee Okaforish called.", *texts[1:]], stop)[0] is False
    assert cross_document_rate([True, False, False, False]) == {"cross_document.rate": 0.25,
                                                                "cross_document.documents": 4.0}
    no_names = [[Span(0, 3, "CITY")] for _ in texts]  # no gold person names: nothing to measure, not a rate of 0
    assert cross_document_flags(texts, no_names, published, stop) == [] and cross_document_rate([]) == {}
