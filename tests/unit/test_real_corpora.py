"""Real annotated text for the detector: BTC and WNUT-17 readers, user names, casing (METHODS.md §4.1)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from textsift.corpus import Span
from textsift.detection.labelled import LabelledText
from textsift.detection.params import DetectorDataParams
from textsift.detection.real_corpora import bio_example, drop_user_names, read_btc, read_btc_file, real_test_sets
from textsift.detection.training_data import build_detector_data, recase
from textsift.errors import InputError

BTC_SENTENCE = "@\tB-PER\ncolgo\tB-PER\nmet\tO\nAnn\tB-PER\nLee\tI-PER\nin\tO\nPalau\tB-LOC\n@\tO\nbbc\tB-ORG\n!\tO\n"


def _btc_folder(root: Path, sentences: int = 3) -> Path:
    root.mkdir()
    block = "\n".join(BTC_SENTENCE.replace("colgo", f"user{k}") for k in range(sentences))
    (root / "train.conll.gz").write_bytes(gzip.compress(block.encode()))
    (root / "dev.conll").write_text(BTC_SENTENCE, encoding="utf-8")
    (root / "test.conll").write_text(BTC_SENTENCE + "\nquiet\tO\nday\tO\n", encoding="utf-8")
    return root


def _strings(ex: LabelledText) -> list[tuple[str, str]]:
    return [(ex.text[s.start:s.end], s.label) for s in ex.spans]


def test_btc_user_names_are_restored_whole_and_labels_become_dper(tmp_path: Path) -> None:
    (ex,) = read_btc_file(_btc_folder(tmp_path / "btc") / "dev.conll")
    assert ex.text == "@colgo met Ann Lee in Palau @bbc !"
    assert _strings(ex) == [("@colgo", "PERSON"), ("Ann Lee", "PERSON"), ("Palau", "LOC"), ("@bbc", "ORG")]


def test_btc_folder_keeps_its_splits_and_a_missing_file_names_the_param(tmp_path: Path) -> None:
    splits = read_btc(_btc_folder(tmp_path / "btc"))
    assert {k: len(v) for k, v in splits.items()} == {"train": 3, "validation": 1, "test": 2}
    (tmp_path / "btc" / "dev.conll").unlink()
    with pytest.raises(InputError, match=r"detectors.data.btc_path.*dev.conll|dev.conll.*btc_path"):
        read_btc(tmp_path / "btc")


def test_bio_spans_end_where_the_type_changes() -> None:
    ex = bio_example(["Ann", "Lee", "Oslo", "x"], ["B-PER", "I-PER", "I-LOC", "O"], {"PER": "PERSON", "LOC": "LOC"})
    assert _strings(ex) == [("Ann Lee", "PERSON"), ("Oslo", "LOC")]  # an I- of another type starts a span


def test_unlabelled_user_names_leave_wnut_training() -> None:
    kept = drop_user_names([LabelledText("@paulwalk it is the view", ()),
                            LabelledText("@bo meets Ann", (Span(0, 3, "PERSON"),)),
                            LabelledText("mail me at a@b.org", ())])
    assert [ex.text for ex in kept] == ["@bo meets Ann", "mail me at a@b.org"]


def test_recasing_keeps_offsets_and_touches_only_its_share() -> None:
    ex = LabelledText("Ann Lee lives in Oslo", (Span(0, 7, "PERSON"), Span(17, 21, "LOC")))
    variants = [recase(ex, 1, f"id{k}", 0.5) for k in range(400)]
    changed = [v for v in variants if v.text != ex.text]
    assert 0.4 < len(changed) / 400 < 0.6
    assert {v.text for v in changed} == {ex.text.upper(), ex.text.lower()}
    assert all(v.spans == ex.spans for v in variants)
    assert recase(ex, 1, "id0", 0.0) is ex


def test_btc_joins_training_and_its_test_split_never_trains(tmp_path: Path) -> None:
    folder = _btc_folder(tmp_path / "btc")
    params = DetectorDataParams(synthetic_docs=0, btc_path=str(folder), real_case_rate=0.0)
    data = build_detector_data(params, 7, btc=read_btc(folder))
    assert set(data.sources["train"]) == {"btc"} and data.label_set[:3] == ("PERSON", "LOC", "ORG")
    test_texts = {ex.text for ex in data.test}
    assert test_texts == {"@colgo met Ann Lee in Palau @bbc !", "quiet day"}
    assert not test_texts & {ex.text for ex in data.train}  # duplicates of test text leave training
    assert real_test_sets(params)["btc"] == read_btc(folder)["test"]
    relative = DetectorDataParams(synthetic_docs=0, btc_path="btc")
    assert real_test_sets(relative, root=tmp_path)["btc"] == read_btc(folder)["test"]


def test_a_corpus_without_gold_spans_trains_on_silver_labels_of_its_training_split() -> None:
    import pandas as pd

    from textsift.detection.recognizers.patterns import PatternRecognizer

    texts = [f"write to user{k}@example.org or call +1 (555) 010-{1000 + k}" for k in range(6)]
    corpus = pd.DataFrame({"doc_id": [f"d{k}" for k in range(6)], "text": texts, "spans": [[]] * 6,
                           "split": ["train", "train", "train", "train", "validation", "test"]})
    params = DetectorDataParams(synthetic_docs=0)
    data = build_detector_data(params, 3, corpus, teachers=[PatternRecognizer()])
    assert [ex.text for ex in data.train] == texts[:4]  # only the training split is labelled and trained on
    assert all(_strings(ex) == [(f"user{k}@example.org", "EMAIL"), (f"+1 (555) 010-{1000 + k}", "PHONE")]
               for k, ex in enumerate(data.train))
    assert data.test == () and data.metrics["silver.added_spans"] == 8.0
    never = build_detector_data(params.model_copy(update={"silver": params.silver.model_copy(update={"use": "never"})}),
                                3, corpus, teachers=[PatternRecognizer()])
    assert never.train == ()


def test_silver_teachers_never_override_gold_and_their_agreement_is_measured() -> None:
    from textsift.detection.recognizers.patterns import PatternRecognizer
    from textsift.detection.silver import silver_spans

    texts = ["Ann at ann@example.org on 12/03/1981", "call 555 010 1234"]
    gold = [[Span(0, 3, "PERSON"), Span(7, 22, "EMAIL")], []]
    spans, metrics = silver_spans(texts, [PatternRecognizer()], 0.5, gold)
    assert spans[0] == [Span(0, 3, "PERSON"), Span(7, 22, "EMAIL"), Span(26, 36, "DATE")]
    assert spans[1] == [Span(5, 17, "PHONE")]
    assert metrics["silver.added_spans"] == 2.0 and metrics["silver.patterns.spans"] == 3.0
    assert 0 < metrics["silver.agreement.patterns_vs_gold.f1"] < 1  # EMAIL agrees, PERSON is not a pattern
