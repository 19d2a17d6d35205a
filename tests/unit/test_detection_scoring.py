"""Detection figures on annotated text: exact, >= 50% overlap and character scores (METHODS.md §4.1)."""

from __future__ import annotations

import pytest

from textsift.corpus import Span
from textsift.detection.scoring import detection_scores, overlaps


def test_overlap_needs_the_same_label_and_half_of_the_longer_span() -> None:
    assert overlaps(Span(4, 11, "PERSON"), Span(0, 11, "PERSON"))  # "Dr. Ann Lee" for "Ann Lee": 7 of 11
    assert not overlaps(Span(0, 3, "PERSON"), Span(0, 13, "PERSON"))  # "Ann" for "Ann Lee Smith"
    assert not overlaps(Span(0, 7, "LOC"), Span(0, 7, "PERSON"))
    assert not overlaps(Span(0, 3, "PERSON"), Span(3, 6, "PERSON"))  # touching is not overlapping


def test_scores_per_type_exact_overlap_and_characters() -> None:
    #            0         1         2         3
    #            0123456789012345678901234567890123456
    gold = [[Span(0, 7, "PERSON"), Span(15, 21, "LOC")], [Span(0, 5, "ORG")]]
    predicted = [[Span(0, 7, "PERSON"), Span(15, 19, "LOC"), Span(25, 30, "DATE"), Span(30, 34, "PERSON")],
                 []]
    s = detection_scores(gold, predicted)
    assert s["PERSON.exact.recall"] == 1.0 and s["PERSON.exact.precision"] == 0.5
    assert s["LOC.exact.recall"] == 0.0 and s["LOC.overlap.recall"] == 1.0  # 4 of 6 characters
    assert s["ORG.overlap.recall"] == 0.0 and s["ORG.exact.support"] == 1.0
    assert s["exact.recall"] == pytest.approx(1 / 3) and s["overlap.recall"] == pytest.approx(2 / 3)
    # DATE is not annotated here, so it is not held against anyone; the PERSON at 30-34 is
    assert s["overlap.precision"] == pytest.approx(2 / 3)
    assert s["char.precision"] == pytest.approx(11 / 15) and s["char.recall"] == pytest.approx(11 / 18)
    assert s["texts"] == 2 and s["gold_spans"] == 3


def test_character_scores_ignore_the_type_and_nesting() -> None:
    gold = [[Span(0, 10, "ORG"), Span(4, 10, "LOC")]]
    s = detection_scores(gold, [[Span(0, 10, "LOC")]])
    assert s["char.precision"] == 1.0 and s["char.recall"] == 1.0
    assert s["ORG.overlap.recall"] == 0.0 and s["LOC.overlap.recall"] == 1.0  # 6 of the longer 10: >= half
    assert detection_scores([[]], [[]])["char.precision"] == 0.0


def test_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="1 gold span lists for 2"):
        detection_scores([[]], [[], []])


def test_the_report_table_puts_real_text_beside_the_corpus() -> None:
    from textsift.evaluation.detection_quality import detection_table

    def figures(prefix: str, labels: list[str], recall: float) -> dict[str, float]:
        gold = [[Span(0, 5, label) for label in labels]]
        found = [[Span(0, 5, labels[0])]] if recall else [[]]
        return {f"{prefix}.{k}": v for k, v in detection_scores(gold, found).items()}

    metrics = {**figures("corpus.test", ["PERSON", "LOC"], 1.0), **figures("real.btc", ["PERSON"], 0.0),
               "spans": 3.0, "real.btc.chars_per_s": 1e5}
    table = detection_table(metrics)
    assert list(zip(table["text"].str.split().str[0], table["type"], table["recall"], strict=True)) == [
        ("corpus", "LOC", 0.0), ("corpus", "PERSON", 1.0), ("Broad", "PERSON", 0.0)]
    assert detection_table({"spans": 1.0}).empty


def test_the_report_says_which_detected_types_each_setting_protects() -> None:
    from textsift.config import parse_params
    from textsift.evaluation.detection_quality import protected_types_table

    settings = parse_params({"privatize": {"settings": {
        "red": {"kind": "redact", "labels": ["PERSON", "EMAIL"]}, "gold": {"kind": "redact", "spans": "gold"},
        "ds": {"kind": "datasifter", "mask_detected": True},
        "hybrid": {"kind": "metric_dp", "index": "w2v", "epsilon": 50, "stand_ins": ["PERSON"]}}},
        "indexes": {"sources": {"w2v": {"kind": "word2vec"}}}}).privatize.settings
    table = protected_types_table(settings).set_index("setting")
    assert table.loc["red", "types"] == "PERSON, EMAIL"
    assert table.loc["ds", "types"] == "PERSON, EMAIL, PHONE, ID, URL"  # the direct identifiers by default
    assert table.loc["hybrid", "protects_detected"] and table.loc["hybrid", "types"] == "PERSON"
    assert not table.loc["gold", "protects_detected"] and table.loc["gold", "types"] == ""
