"""The demo corpus: exact gold spans, reproducibility, label and entity rates, learnability."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from textsift.corpus import RawRecord
from textsift.demo import SPAN_LABELS, entity_pools, generate_demo, write_demo_jsonl
from textsift.ingest_params import DemoCorpusParams, NormalizeParams, SourceParams
from textsift.interests.synthetic import NONE, filler_split, load_lexicon
from textsift.normalize import normalize_text
from textsift.readers import read_records

SEED = 1234
PARAMS = DemoCorpusParams(n_docs=2000, pii_per_doc=2.0, positive_rate=0.5, label_noise=0.05)


@pytest.fixture(scope="module")
def corpus() -> list[RawRecord]:
    return generate_demo(PARAMS, SEED)


def test_spans_are_the_planted_values_inside_the_text(corpus: list[RawRecord]) -> None:
    pools = entity_pools(SEED)
    for record in corpus:
        assert record.text is not None
        ends = [0]
        for span in record.spans:
            assert ends[-1] <= span.start < span.end <= len(record.text)  # ordered, disjoint, inside
            assert span.label in SPAN_LABELS
            assert record.text[span.start : span.end] in pools[span.label]
            ends.append(span.end)
        # already normalized, so ingest keeps text and spans exactly
        assert normalize_text(record.text, record.spans, NormalizeParams()) == (record.text, record.spans)


def test_raw_is_the_json_line_of_the_record(corpus: list[RawRecord]) -> None:
    for line, record in enumerate(corpus[:200], start=1):
        row = json.loads(record.raw)
        assert (row["id"], row["text"], row["label"], record.source_line) == (
            record.doc_id, record.text, record.label, line
        )
        assert [(s["start"], s["end"], s["label"]) for s in row["spans"]] == [
            (s.start, s.end, s.label) for s in record.spans
        ]


def test_same_seed_same_corpus_and_other_seed_another() -> None:
    params = DemoCorpusParams(n_docs=100)
    first, again, other = (generate_demo(params, seed) for seed in (SEED, SEED, SEED + 1))
    assert first == again
    assert sum(a.text != b.text for a, b in zip(first, other, strict=True)) > 90


@pytest.mark.parametrize("k", [10, 57])
def test_a_smaller_corpus_is_a_prefix_of_a_larger_one(corpus: list[RawRecord], k: int) -> None:
    larger = generate_demo(PARAMS.model_copy(update={"n_docs": 200}), SEED)
    assert generate_demo(PARAMS.model_copy(update={"n_docs": k}), SEED) == larger[:k]
    assert larger == corpus[:200]
    assert [r.doc_id for r in larger[:3]] == ["demo-000000", "demo-000001", "demo-000002"]


@pytest.mark.parametrize("rate", [0.5, 0.3])
def test_label_share_matches_positive_rate(corpus: list[RawRecord], rate: float) -> None:
    records = corpus if rate == PARAMS.positive_rate else generate_demo(
        PARAMS.model_copy(update={"positive_rate": rate}), SEED
    )
    n = len(records)
    share = sum(r.label == "pos" for r in records) / n
    assert {r.label for r in records} == {"pos", "neg"}
    assert abs(share - rate) <= 4 * math.sqrt(rate * (1 - rate) / n)


def test_spans_per_document_are_poisson_with_the_configured_mean(corpus: list[RawRecord]) -> None:
    counts = [len(r.spans) for r in corpus]
    mean = sum(counts) / len(counts)
    lam = PARAMS.pii_per_doc
    assert abs(mean - lam) <= 4 * math.sqrt(lam / len(counts))  # Poisson: variance = mean
    variance = sum((c - mean) ** 2 for c in counts) / (len(counts) - 1)
    assert 0.8 * lam <= variance <= 1.2 * lam  # sd of the sample variance is ~0.07 here
    assert {s.label for r in corpus for s in r.spans} == set(SPAN_LABELS)


def test_entity_values_recur_across_documents(corpus: list[RawRecord]) -> None:
    docs_per_value = Counter(
        entity for r in corpus for entity in {(s.label, r.text[s.start : s.end]) for s in r.spans}
    )
    for label in SPAN_LABELS:
        assert max(n for (lab, _), n in docs_per_value.items() if lab == label) >= 2, label


def test_edge_rates_give_one_label_and_no_spans() -> None:
    params = DemoCorpusParams(n_docs=50, pii_per_doc=0, positive_rate=1.0, label_noise=0)
    records = generate_demo(params, SEED)
    assert all(r.label == "pos" and r.spans == () for r in records)


def test_jsonl_round_trips_through_the_reader(corpus: list[RawRecord], tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    write_demo_jsonl(corpus[:300], path)
    src = SourceParams(kind="file", path=str(path), id_field="id", spans_field="spans", interest_field="interest")
    assert list(read_records(path, src)) == corpus[:300]
    assert [p.name for p in tmp_path.iterdir()] == ["demo.jsonl"]  # no temporary file left


def test_sentiment_is_learnable_but_not_trivial_and_noise_contradicts_labels(corpus: list[RawRecord]) -> None:
    texts, labels = [r.text for r in corpus], [r.label for r in corpus]
    vectorizer = TfidfVectorizer(ngram_range=(1, 2))
    model = LogisticRegression(C=4.0, solver="liblinear")
    model.fit(vectorizer.fit_transform(texts[:1500]), labels[:1500])
    accuracy = model.score(vectorizer.transform(texts[1500:]), labels[1500:])
    assert 0.7 <= accuracy <= 0.99
    # with label_noise 1 every document is worded against its label
    flipped = generate_demo(PARAMS.model_copy(update={"label_noise": 1.0}), SEED)[1500:]
    flipped_texts, flipped_labels = [r.text for r in flipped], [r.label for r in flipped]
    assert model.score(vectorizer.transform(flipped_texts), flipped_labels) <= 0.3


def _held_out_values(category: str, seed: int) -> list[str]:
    """The slot values a test-split evidence phrase of ``category`` may hold (a slot too small to split: all)."""
    out = []
    for slot, values in load_lexicon().slots[category].items():
        test = [v for v in values if filler_split(category, slot, v, seed) == "test"]
        out.extend(test or values)
    return out


def test_a_share_of_documents_gives_away_a_held_out_interest_and_nothing_else_changes(
    corpus: list[RawRecord],
) -> None:
    plain = generate_demo(PARAMS.model_copy(update={"interest_rate": 0.0}), SEED)
    assert all(r.interest == NONE for r in plain)
    interested = [(r, p) for r, p in zip(corpus, plain, strict=True) if r.interest != NONE]
    n, rate = len(corpus), PARAMS.interest_rate
    assert abs(len(interested) / n - rate) <= 4 * math.sqrt(rate * (1 - rate) / n)
    assert {r.interest for r, _ in interested} == set(load_lexicon().categories)
    for record, without in zip(corpus, plain, strict=True):
        if record.interest == NONE:
            assert record == without  # the interest draws do not disturb any other document
            continue
        assert any(value in record.text.lower() for value in _held_out_values(record.interest, SEED))
        assert len(record.text) > len(without.text) and record.label == without.label
        values = [record.text[s.start:s.end] for s in record.spans]
        assert values == [without.text[s.start:s.end] for s in without.spans]
        assert json.loads(record.raw)["interest"] == record.interest
