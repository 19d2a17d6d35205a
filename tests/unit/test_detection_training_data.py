"""DPER training data: source mixing, WNUT-17 label mapping, splits, leakage guards, cutting."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from textsift.corpus import Span
from textsift.detection.labelled import LabelledText
from textsift.detection.real_corpora import WNUT17_FILES
from textsift.detection.synthetic import generate
from textsift.detection.training_data import (
    DetectorDataParams,
    build_detector_data,
    hashed_split,
    load_detector_data,
    read_wnut17,
    real_corpus_paths,
    split_long,
)
from textsift.detection.types import ENTITY_TYPES
from textsift.errors import InputError

CONLL = (
    "Visit\tO\nNew\tB-location\nYork\tI-location\nwith\tO\nAnn\tB-person\nLee\tI-person\n\t\n"
    "Working\tO\nat\tO\nAcme\tB-corporation\nwith\tO\nthe\tO\nBeatles\tB-group\n\n"
    "Reading\tO\nHarry\tB-creative-work\nPotter\tI-creative-work\non\tO\nKindle\tB-product\n\n"
    "Bob\tB-creative-work,B-person\nsays\tO\nhi\tO\n"
)


def _surfaces(ex: LabelledText) -> list[tuple[str, str]]:
    return [(ex.text[s.start:s.end], s.label) for s in ex.spans]


def _corpus() -> pd.DataFrame:
    rows = []
    for split, n in (("train", 6), ("validation", 2), ("test", 4)):
        for k in range(n):
            text = f"{split} note {k}: call Ann Lee in Paris."
            start = text.index("Ann")
            spans = [{"start": start, "end": start + 7, "label": "PERSON"},
                     {"start": text.index("Paris"), "end": text.index("Paris") + 5, "label": "CITY"}]
            rows.append({"doc_id": f"{split}-{k}", "text": text, "label": "pos", "split": split, "spans": spans})
    return pd.DataFrame(rows)


def _only(source: str, **kw: object) -> DetectorDataParams:
    defaults: dict[str, object] = {"synthetic_docs": 0, "corpus_spans": source == "corpus"}
    return DetectorDataParams(**{**defaults, **kw})


def test_wnut_types_map_to_dper_or_stay_their_own(tmp_path: Path) -> None:
    path = tmp_path / "tiny.conll"
    path.write_text(CONLL, encoding="utf-8")
    wnut = read_wnut17(path)
    assert list(wnut) == ["all"] and len(wnut["all"]) == 4
    assert _surfaces(wnut["all"][3]) == [("Bob", "creative-work")]  # a multi-type tag keeps its first type

    mapped = build_detector_data(_only("wnut17", wnut17_path=str(path)), 0, wnut17=wnut)
    got = {pair for ex in (*mapped.train, *mapped.validation, *mapped.test) for pair in _surfaces(ex)}
    assert got == {("New York", "LOC"), ("Ann Lee", "PERSON"), ("Acme", "ORG"), ("Beatles", "ORG")}
    assert mapped.label_set == ("PERSON", "LOC", "ORG") and mapped.annotated == {"wnut17": ("LOC", "ORG", "PERSON")}

    own = build_detector_data(_only("wnut17", wnut17_path=str(path), wnut17_labels="own"), 0, wnut17=wnut)
    labels = {label for ex in (*own.train, *own.validation, *own.test) for _, label in _surfaces(ex)}
    assert labels == {"location", "person", "corporation", "group", "creative-work", "product"}
    assert own.label_set == tuple(sorted(labels))

    custom = build_detector_data(_only("wnut17", wnut17_path=str(path), wnut17_labels={"product": "PRODUCT"}), 0,
                                 wnut17=wnut)
    assert [pair for ex in (*custom.train, *custom.validation, *custom.test) for pair in _surfaces(ex)] == [
        ("Kindle", "PRODUCT")]


def test_real_wnut17_keeps_its_splits(shared_data: Path) -> None:
    folder = shared_data / "wnut17"
    if not all((folder / name).exists() for name in WNUT17_FILES.values()):
        pytest.skip("WNUT-17 files absent")
    wnut = read_wnut17(folder)
    assert len(wnut["train"]) > 3000 and len(wnut["validation"]) > 900 and len(wnut["test"]) > 1200
    data = build_detector_data(_only("wnut17", wnut17_path=str(folder)), 0, wnut17=wnut)
    assert set(data.counts()["test"]) == {"wnut17"} and len(data.test) >= len(wnut["test"])
    assert {s.label for ex in data.train for s in ex.spans} == {"PERSON", "LOC", "ORG"}
    person = next(ex for ex in data.train if any(s.label == "PERSON" for s in ex.spans))
    span = next(s for s in person.spans if s.label == "PERSON")
    assert person.text[span.start:span.end].strip() == person.text[span.start:span.end]


def test_corpus_splits_are_kept_and_its_test_never_trains() -> None:
    corpus = _corpus()
    data = build_detector_data(_only("corpus"), 3, corpus)
    assert data.counts() == {"train": {"corpus": 6}, "validation": {"corpus": 2}, "test": {"corpus": 4}}
    test_texts = set(corpus.loc[corpus["split"] == "test", "text"])
    assert {ex.text for ex in data.test} == test_texts
    assert not test_texts & {ex.text for ex in (*data.train, *data.validation)}
    assert _surfaces(data.train[0]) == [("Ann Lee", "PERSON"), ("Paris", "LOC")]  # CITY -> LOC
    assert data.annotated == {"corpus": ("LOC", "PERSON")}


def test_a_text_in_test_is_dropped_from_train() -> None:
    corpus = _corpus()
    corpus.loc[0, "text"] = corpus.loc[corpus["split"] == "test", "text"].iloc[0]
    data = build_detector_data(_only("corpus"), 3, corpus)
    assert data.dropped_duplicates == 1 and len(data.train) == 5
    assert not {ex.text for ex in data.test} & {ex.text for ex in data.train}


def test_corpus_without_spans_is_skipped_and_bad_splits_are_errors() -> None:
    corpus = _corpus().assign(spans=None)
    assert build_detector_data(_only("corpus"), 3, corpus).counts() == {s: {} for s in ("train", "validation", "test")}
    bad = _corpus()
    bad.loc[2, "split"] = "dev"
    with pytest.raises(InputError, match="train-2") as err:
        build_detector_data(_only("corpus"), 3, bad)
    assert "Ann" not in str(err.value)
    bad = _corpus()
    bad.at[1, "spans"] = [{"start": 5, "end": 500, "label": "PERSON"}]
    with pytest.raises(InputError, match="train-1") as err:
        build_detector_data(_only("corpus"), 3, bad)
    assert "Ann" not in str(err.value)


def test_synthetic_splits_are_hashed_and_size_independent() -> None:
    small = build_detector_data(_only("synthetic", synthetic_docs=300), 5)
    large = build_detector_data(_only("synthetic", synthetic_docs=600), 5)
    for split in ("train", "validation", "test"):
        assert {ex.text for ex in getattr(small, split)} <= {ex.text for ex in getattr(large, split)}
    assert small.label_set == ENTITY_TYPES and small.annotated == {"synthetic": ENTITY_TYPES}
    held_out = {ex.text for ex in large.test}
    assert held_out and not held_out & {ex.text for ex in (*large.train, *large.validation)}
    shares = [hashed_split(f"synthetic/{i}", 5, 0.1, 0.2) for i in range(5000)]
    assert abs(shares.count("test") / 5000 - 0.2) < 0.02 and abs(shares.count("validation") / 5000 - 0.1) < 0.02


def test_sources_mix_in_one_structure(tmp_path: Path) -> None:
    path = tmp_path / "tiny.conll"
    path.write_text(CONLL, encoding="utf-8")
    params = DetectorDataParams(synthetic_docs=50, wnut17_path=str(path))
    data = load_detector_data(params, 1, _corpus())  # reads WNUT-17 from params.wnut17_path
    counts = data.counts().values()
    total = {source: sum(c.get(source, 0) for c in counts) for source in ("corpus", "synthetic", "wnut17")}
    assert total == {"corpus": 12, "synthetic": 50, "wnut17": 4}
    assert data.label_set == ENTITY_TYPES
    assert [len(data.sources[s]) for s in ("train", "validation", "test")] == [
        len(data.train), len(data.validation), len(data.test)]


def test_long_examples_are_cut_outside_spans() -> None:
    base = generate(40, seed=2)
    text, spans, offset = "", [], 0
    for ex in base:
        spans += [Span(s.start + offset, s.end + offset, s.label) for s in ex.spans]
        text += ex.text + " "
        offset = len(text)
    long = LabelledText(text.rstrip(), tuple(spans))
    pieces = split_long(long, 200)
    assert all(len(p.text) <= 200 for p in pieces) and len(pieces) > 10
    assert sorted(pair for p in pieces for pair in _surfaces(p)) == sorted(_surfaces(long))
    assert "".join(p.text for p in pieces).replace(" ", "") == long.text.replace(" ", "").replace("\n", "")
    straddled = LabelledText("x" * 50 + " " + "Y" * 60, (Span(51, 111, "ID"),))
    cut = split_long(straddled, 40)  # the span is longer than max_chars: its piece is too, never split
    assert [_surfaces(p) for p in cut] == [[], [], [("Y" * 60, "ID")]] and [len(p.text) for p in cut] == [40, 10, 60]


def test_params_are_strict_and_checked() -> None:
    with pytest.raises(ValidationError, match="train gets the rest"):
        DetectorDataParams(validation=0.5, test=0.5)
    with pytest.raises(ValidationError):
        DetectorDataParams(synthetic_docs=-1)
    with pytest.raises(ValidationError):
        DetectorDataParams(synthetic_dcos=10)
    with pytest.raises(ValidationError):
        DetectorDataParams(wnut17_labels="mapped")
    assert DetectorDataParams().model_dump()["corpus_labels"] == {"CITY": "LOC", "COMPANY": "ORG", "SCHOOL": "ORG"}


def test_synthetic_data_does_not_depend_on_the_process_hash_seed() -> None:
    """Some Faker locales build word lists from sets; a run must not depend on PYTHONHASHSEED."""
    import os
    import subprocess
    import sys

    code = ("import hashlib; from textsift.detection.synthetic import generate; "
            "print(hashlib.sha256(repr(generate(400, 7)).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1


def test_a_missing_real_corpus_path_names_its_param(tmp_path: Path) -> None:
    (tmp_path / "wnut17").mkdir()
    params = DetectorDataParams(wnut17_path="wnut17", btc_path="nowhere/btc")
    with pytest.raises(InputError, match=r"detectors\.data\.btc_path"):
        real_corpus_paths(params, tmp_path)
    assert real_corpus_paths(params.model_copy(update={"btc_path": None}), tmp_path) == [tmp_path / "wnut17"]
