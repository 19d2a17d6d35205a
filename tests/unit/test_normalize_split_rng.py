"""Normalization keeps spans on their characters; splits are seeded, stratified and stable."""

from __future__ import annotations

from collections import Counter

import numpy as np

from textsift.corpus import Span
from textsift.ingest_params import NormalizeParams, SplitParams
from textsift.normalize import normalize_text
from textsift.rng import generator, stable_key
from textsift.split import assign_splits


def test_spans_follow_their_characters_through_normalization() -> None:
    text = "  Cafe\u0301 with <br /><br />Ann   Lee\tin Paris "
    spans = tuple(
        Span(text.index(value), text.index(value) + len(value), label)
        for value, label in (("Cafe\u0301", "ORG"), ("Ann   Lee", "PERSON"), ("Paris", "CITY"))
    )
    out, moved = normalize_text(text, spans, NormalizeParams())
    assert out == "Café with Ann Lee in Paris"
    assert [out[s.start:s.end] for s in moved] == ["Café", "Ann Lee", "Paris"]


def test_normalization_can_be_switched_off() -> None:
    params = NormalizeParams(unicode_nfc=False, strip_html_breaks=False, collapse_whitespace=False)
    out, _ = normalize_text("a<br />b  c", (), params)
    assert out == "a<br />b  c"


def _ids(n: int) -> list[str]:
    return [f"d{i}" for i in range(n)]


def test_split_is_stratified_with_exact_fractions() -> None:
    ids = _ids(1000)
    labels = ["a" if i % 4 else "b" for i in range(1000)]
    splits = assign_splits(ids, labels, SplitParams(validation=0.1, test=0.2), seed=3)
    counts = Counter(zip(labels, splits, strict=True))
    assert counts[("a", "test")] == 150 and counts[("b", "test")] == 50
    assert counts[("a", "validation")] == 75 and counts[("b", "validation")] == 25


def test_split_does_not_depend_on_input_order_and_changes_with_seed() -> None:
    ids, labels = _ids(300), ["x"] * 300
    params = SplitParams()
    first = dict(zip(ids, assign_splits(ids, labels, params, seed=1), strict=True))
    rev = dict(zip(ids[::-1], assign_splits(ids[::-1], labels, params, seed=1), strict=True))
    other = dict(zip(ids, assign_splits(ids, labels, params, seed=2), strict=True))
    assert first == rev
    assert first != other


def test_given_test_split_is_respected() -> None:
    ids = _ids(100)
    given = ["test" if i < 40 else "train" for i in range(100)]
    splits = assign_splits(ids, ["x"] * 100, SplitParams(validation=0.1, test=0.2), 5, given)
    assert all(s == "test" for s in splits[:40])
    assert Counter(splits[40:]) == {"train": 52, "validation": 8}  # 0.1/0.8 of 60 = 7.5 -> 8


def test_generators_are_keyed_by_seed_stage_and_id() -> None:
    a = generator(1, "mask", "doc-1").random(4)
    assert np.array_equal(a, generator(1, "mask", "doc-1").random(4))
    assert not np.array_equal(a, generator(1, "mask", "doc-2").random(4))
    assert not np.array_equal(a, generator(1, "fill", "doc-1").random(4))
    assert not np.array_equal(a, generator(2, "mask", "doc-1").random(4))
    assert stable_key(1, "s", "k") == stable_key(1, "s", "k") != stable_key(1, "s", "j")
