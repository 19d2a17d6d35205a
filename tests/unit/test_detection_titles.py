"""A title is not part of a PERSON span: the model's spans start after it, and a title alone is no person."""

from __future__ import annotations

import pytest

from textsift.corpus import Span
from textsift.detection.recognizers import model as model_recognizer
from textsift.detection.recognizers.base import Detection
from textsift.detection.titles import without_titles

TEXT = ("Chief Justice John Roberts told the Secretary that DR. LEE and Prof Ann Smith met King Charles III; King said "
        "Gen Hoshino and Gen. Scott met Mr. President Ada Park.")


def _trimmed(name: str, label: str = "PERSON") -> str | None:
    start = TEXT.index(name)
    found = without_titles(TEXT, Detection(start, start + len(name), label, 0.9, "model"))
    return None if found is None else TEXT[found.start:found.end]


@pytest.mark.parametrize(("span", "kept"), [
    ("Chief Justice John Roberts", "John Roberts"),  # a title of two words
    ("DR. LEE", "LEE"),  # case and dots ignored
    ("Prof Ann Smith", "Ann Smith"),
    ("King Charles III", "Charles III"),
    ("John Roberts", "John Roberts"),  # no title: as it was
    ("Mr. President Ada Park", "Ada Park"),  # titles in a row
    ("Gen. Scott", "Scott"),
    ("Gen Hoshino", "Gen Hoshino"),  # without its dot, an abbreviation may be a given name
])
def test_a_person_span_starts_after_its_title(span: str, kept: str | None) -> None:
    assert _trimmed(span) == kept


def test_a_title_alone_is_no_person_after_an_article_and_may_be_a_surname_without_one() -> None:
    secretary, king = TEXT.index("Secretary"), TEXT.index("King said")
    assert without_titles(TEXT, Detection(secretary, secretary + 9, "PERSON", 0.9, "model")) is None
    alone = Detection(king, king + 4, "PERSON", 0.9, "model")
    assert without_titles(TEXT, alone) == alone


def test_after_a_title_the_last_word_is_a_name_whatever_it_reads_as() -> None:
    text = "They met the Rev. King and Mr. President, and Mr. . too."
    for span, kept in (("Rev. King", "King"), ("Mr. President", "President"), ("Mr. .", "Mr. .")):
        start = text.index(span)
        found = without_titles(text, Detection(start, start + len(span), "PERSON", 0.9, "model"))
        assert found is not None and text[found.start:found.end] == kept


def test_other_types_keep_their_titles() -> None:
    assert _trimmed("Chief Justice John Roberts", "ORG") == "Chief Justice John Roberts"


def test_the_models_spans_come_without_titles(monkeypatch: pytest.MonkeyPatch) -> None:
    spans = [(Span(0, 26, "PERSON"), 0.9), (Span(36, 45, "PERSON"), 0.4), (Span(51, 58, "PERSON"), 0.01)]
    monkeypatch.setattr(model_recognizer, "detect_scored", lambda *args, **kwargs: [spans])
    detector = type("Detector", (), {"labels": ("PERSON",)})()
    found = model_recognizer.ModelRecognizer(detector).analyze([TEXT], 0.02)
    assert [(TEXT[d.start:d.end], d.score) for d in found[0]] == [("John Roberts", 0.9)]
