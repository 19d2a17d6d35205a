"""The output vocabulary of an index: frequent in training documents, never inside private spans
(METHODS.md §2; project issue #8, item 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from pydantic import ValidationError

from textsift import rng
from textsift.corpus import Span
from textsift.errors import ConfigError
from textsift.indexes.params import EmbeddingSourceParams
from textsift.indexes.projection import project_vocabulary
from textsift.indexes.vocabulary import document_frequencies, private_words, require_outputs, select_outputs


@dataclass(frozen=True)
class DetectedSpan:  # a detector's prediction: only start/end matter
    start: int
    end: int
    score: float = 1.0


def _spans(text: str, *values: str) -> list[Span]:
    return [Span(text.index(v), text.index(v) + len(v), "PII") for v in values]


def test_document_frequency_counts_documents_not_occurrences_under_the_index_casing() -> None:
    texts = ["the the the cat", "The dog, the cat", "Dog"]
    assert document_frequencies(texts, lowercase=True) == {"the": 2, "cat": 2, "dog": 2}
    cased = document_frequencies(texts, lowercase=False)
    assert (cased["the"], cased["The"], cased["Dog"], cased["dog"]) == (2, 1, 1, 1)


def test_document_frequency_counts_only_uses_outside_private_spans() -> None:
    texts = ["Rex Dog said hi", "the dog ran", "Rex Dog again, Rex"]
    spans = [_spans(texts[0], "Rex Dog"), [], [Span(0, 7, "PERSON")]]  # the second 'Rex' of doc 3 is public
    assert document_frequencies(texts, lowercase=True, spans=spans) == {
        "said": 1, "hi": 1, "the": 1, "dog": 1, "ran": 1, "again": 1, "rex": 1}
    with pytest.raises(ValueError, match="3 texts but 1 span"):
        document_frequencies(texts, lowercase=True, spans=[[]])


def test_private_words_are_every_word_overlapping_a_span_lower_cased() -> None:
    texts = ["My name is Ada Lovelace, mail ada.king@example.com now.", "Call the Smithsons at 5 pm."]
    spans = [_spans(texts[0], "Ada Lovelace", "ada.king@example.com"),
             [DetectedSpan(texts[1].index("Smith"), texts[1].index("Smith") + 5)]]  # part of a word: whole word
    assert private_words(texts, spans) == {"ada", "lovelace", "king@example", "com", "smithsons"}
    assert private_words(texts, [[], []]) == frozenset()
    with pytest.raises(ValueError, match="2 texts but 1 span"):
        private_words(texts, [[]])


def test_words_seen_only_in_spans_are_never_outputs_however_frequent() -> None:
    texts = [f"I met Zed Quill at the cafe {i}. The cafe was fine." for i in range(30)]
    spans = [_spans(t, "Zed Quill") for t in texts]  # a name in 30 documents, always as personal data
    texts.append("The courier was Cafe Bros")  # 'cafe' inside a span here, used publicly in 30 documents
    spans.append(_spans(texts[-1], "Cafe Bros"))
    banned = private_words(texts, spans)
    for lowercase in (True, False):
        freq = document_frequencies(texts, lowercase, spans)
        words = sorted(document_frequencies(texts, lowercase))
        selection = select_outputs(words, freq, min_doc_freq=5, banned=banned)
        outputs = {w for w, ok in zip(words, selection.allowed, strict=True) if ok}
        assert not {w.lower() for w in outputs} & {"zed", "quill", "bros"}
        assert {"met", "at", "was", "fine", "cafe"} <= outputs
        assert selection.excluded_private == (4 if not lowercase else 3)  # Zed, Quill, Bros (+ 'Cafe' cased)
        assert selection.size == len(outputs) == selection.candidates - selection.excluded_private \
            - selection.excluded_rare


def test_rare_words_are_excluded_and_counted_and_repeated_items_count_once() -> None:
    freq = {"common": 9, "edge": 5, "rare": 4, "once": 1, "secret": 2}  # public document frequencies
    words = ["common", "rare", "common", "edge", "secret", "once", "unseen", "rare"]  # contextual pairs repeat
    selection = select_outputs(words, freq, min_doc_freq=5, banned={"secret"})
    assert selection.allowed.tolist() == [True, False, True, True, False, False, False, False]
    assert (selection.candidates, selection.excluded_rare, selection.excluded_private, selection.size) == (6, 3, 1, 2)
    assert selection.metrics() == {"vocab_size": 2.0, "candidate_words": 6.0, "min_doc_freq": 5.0,
                                   "excluded.doc_freq": 3.0, "excluded.private_span": 1.0}
    assert select_outputs(words, freq, min_doc_freq=1, banned=()).size == 5


def test_too_small_output_vocabulary_is_a_config_error_that_says_what_to_lower() -> None:
    selection = select_outputs(["a", "b", "c"], {"a": 3, "b": 1, "c": 9}, min_doc_freq=10, banned={"c"})
    with pytest.raises(ConfigError, match=r"indexes\.sources\.w2v\.min_doc_freq") as err:
        require_outputs(selection, "w2v")
    assert "0 word(s)" in str(err.value) and "2 occur in fewer than min_doc_freq=10" in str(err.value)
    require_outputs(select_outputs(["a", "c"], {"a": 3, "c": 9}, 3, ()), "w2v")
    with pytest.raises(ConfigError, match="min_doc_freq must be >= 1"):
        select_outputs(["a"], {"a": 1}, 0, ())


def test_min_doc_freq_is_a_validated_source_param() -> None:
    assert EmbeddingSourceParams(kind="word2vec").min_doc_freq == 5
    assert "min_doc_freq" in EmbeddingSourceParams.model_json_schema()["properties"]
    with pytest.raises(ValidationError, match="min_doc_freq"):
        EmbeddingSourceParams(kind="word2vec", min_doc_freq=0)


def test_subset_keeps_rows_and_the_projection() -> None:
    vectors = rng.generator(1, "test", "subset").standard_normal((5, 400)).astype(np.float32)
    items = project_vocabulary(list("abcde"), vectors, beta=0.7, delta=1e-6, omega="log",
                               generator=rng.generator(1, "test", "p"))
    kept = items.subset(np.array([True, False, True, False, True]))
    assert kept.words == ["a", "c", "e"] and kept.projection is items.projection and (kept.d, kept.m) == (400, items.m)
    np.testing.assert_array_equal(kept.vectors, items.vectors[[0, 2, 4]])
    with pytest.raises(ValueError, match="mask"):
        items.subset(np.array([True]))
