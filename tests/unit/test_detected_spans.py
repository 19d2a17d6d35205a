"""The corpus-wide detections file: provenance kept, a setting keeps the types it protects (METHODS.md §4.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from textsift.catalog import path as catalog_path
from textsift.corpus import Span
from textsift.detection.corpus_spans import detected_spans
from textsift.detection.recognizers.base import Detection
from textsift.detection.spans_file import read_detected, stored_spans, text_digest, write_detected
from textsift.errors import StageError

DETECTED = catalog_path("detected")

TEXTS = ["Ann Lee wrote to ann@example.org", "nothing here"]
FOUND = [[Detection(0, 7, "PERSON", 0.31, "model"), Detection(17, 32, "EMAIL", 1.0, "model+patterns")], []]


def test_a_setting_keeps_only_the_types_it_protects(tmp_path: Path) -> None:
    write_detected(tmp_path / DETECTED, ["d1", "d2"], TEXTS, FOUND)
    stored = read_detected(tmp_path / DETECTED)
    ids, texts = ["d2", "d1"], TEXTS[::-1]
    assert detected_spans(stored, ids, texts) == [[], [Span(0, 7, "PERSON"), Span(17, 32, "EMAIL")]]
    assert detected_spans(stored, ids, texts, ["EMAIL"]) == [[], [Span(17, 32, "EMAIL")]]
    (cells,) = [v for (doc, _), v in stored.items() if doc == "d1"]
    assert [(d.source, round(d.score, 2)) for d in cells] == [("model", 0.31), ("model+patterns", 1.0)]
    assert "Ann" not in (tmp_path / DETECTED).read_bytes().decode("latin-1")  # offsets only, no text


def test_each_setting_resolves_the_types_it_protects_from_the_stored_candidates(tmp_path: Path) -> None:
    """The file keeps every type a span passed for: a names-only setting protects a name the model also read as a
    place (more likely), a setting of every type gets one type per span, and a fresh text resolves the same way."""
    text = "Bassène (2007) wrote"
    found = [Detection(0, 7, "LOC", 0.6, "model"), Detection(0, 7, "PERSON", 0.4, "model"),
             Detection(9, 13, "DATE", 0.9, "patterns")]
    write_detected(tmp_path / DETECTED, ["d1"], [text], [found])
    stored = read_detected(tmp_path / DETECTED)
    assert stored[("d1", text_digest(text))] == found  # every candidate, scores as ranked
    assert detected_spans(stored, ["d1"], [text]) == [[Span(0, 7, "LOC"), Span(9, 13, "DATE")]]
    assert detected_spans(stored, ["d1"], [text], ["PERSON"]) == [[Span(0, 7, "PERSON")]]
    assert stored_spans(stored, ["d1"], [text], ["PERSON", "LOC"]) == [[Span(0, 7, "LOC")]]
    fresh = detected_spans({}, ["new"], [text], ["PERSON"], lambda texts: [list(found) for _ in texts])
    assert fresh == [[Span(0, 7, "PERSON")]]


def test_a_reader_of_the_file_alone_gets_every_document_in_order_or_an_error_naming_what_is_missing(
        tmp_path: Path) -> None:
    write_detected(tmp_path / DETECTED, ["d1", "d2"], TEXTS, FOUND)
    stored = read_detected(tmp_path / DETECTED)
    assert stored_spans(stored, ["d2", "d1"], TEXTS[::-1]) == [[], [Span(0, 7, "PERSON"), Span(17, 32, "EMAIL")]]
    edited = TEXTS[0].replace("Ann", "Bob")  # the same id with other text: the stored offsets are not its spans
    with pytest.raises(StageError, match="d1") as raised:
        stored_spans(stored, ["d1", "d3"], [edited, "new"])
    assert "d3" in str(raised.value) and "Bob" not in str(raised.value)
    with pytest.raises(StageError, match="run the detect stage first"):
        read_detected(tmp_path / "missing.parquet")


def test_texts_the_file_lacks_are_detected_by_the_caller_that_can_and_only_those() -> None:
    """``textsift privatize`` on a new file and the service's probes detect what the detect stage never saw; the
    documents the file holds keep their stored spans (never detected twice)."""
    stored = {("d1", text_digest(TEXTS[0])): FOUND[0]}
    asked: list[list[str]] = []

    def detect(texts: list[str]) -> list[list[Detection]]:
        asked.append(list(texts))
        return [[Detection(0, 3, "PERSON", 0.5, "model")] for _ in texts]

    got = detected_spans(stored, ["d1", "new"], [TEXTS[0], "Bob called"], ["PERSON"], detect)
    assert got == [[Span(0, 7, "PERSON")], [Span(0, 3, "PERSON")]] and asked == [["Bob called"]]
    with pytest.raises(StageError, match="new"):
        detected_spans(stored, ["d1", "new"], [TEXTS[0], "Bob called"])
