"""Metric-DP never emits a word of fewer than min_doc_freq training documents, nor a private one,
at any ε — yet still perturbs such words when they are inputs (METHODS.md §2; issue #8, item 4)."""

from __future__ import annotations

import numpy as np
import pytest

from textsift import rng
from textsift.corpus import Span
from textsift.indexes.exact_index import ExactSearcher
from textsift.indexes.projection import ProjectedVocabulary, project_vocabulary
from textsift.indexes.store import LoadedIndex, load_index, save_index
from textsift.indexes.vocabulary import document_frequencies, private_words, select_outputs
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder, static_embedder
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard
from textsift.tokenize import metric_dp_words

FREQUENT = [f"word{i}" for i in range(40)]
RARE = [f"rare{i}" for i in range(12)]  # rare{i} is in (i % 4) + 1 <= 4 training documents
PRIVATE = "zebulon"  # frequent, but always inside a gold span
MIN_DOC_FREQ = 5
EPSILONS = (0.05, 0.5, 2.0, 10.0, 1e7)  # 0.05: noise norm ~ m·1.7/ε, far beyond the vocabulary's spread


def _training_corpus() -> tuple[list[str], list[list[Span]]]:
    generator = rng.generator(4, "test", "train")
    texts = [" ".join(FREQUENT[j] for j in generator.integers(0, len(FREQUENT), 10)) for _ in range(200)]
    for i, word in enumerate(RARE):
        for k in range(i % 4 + 1):
            texts[(17 * i + 5 * k) % len(texts)] += f", {word.capitalize()} said"
    spans: list[list[Span]] = [[] for _ in texts]
    for i in range(190, 200):  # 10 documents name him, always as personal data
        spans[i] = [Span(len(texts[i]) + 5, len(texts[i]) + 5 + len(PRIVATE), "PERSON")]
        texts[i] = f"{texts[i]} Ask {PRIVATE.capitalize()} today"
    return texts, spans


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedIndex, ProjectedVocabulary]:
    """An index built as build_indexes builds one: every word is an input, the selection are outputs."""
    texts, spans = _training_corpus()
    words = [*FREQUENT, *RARE, PRIVATE, "said"]
    vectors = (2 * rng.generator(4, "test", "vectors").standard_normal((len(words), 400))).astype(np.float32)
    candidates = project_vocabulary(words, vectors, beta=0.7, delta=1e-6, omega="log",
                                    generator=rng.generator(4, "test", "projection"))
    freq = document_frequencies(texts, lowercase=True, spans=spans)
    assert max(freq[w] for w in RARE) == MIN_DOC_FREQ - 1 and freq[PRIVATE] == 0
    assert document_frequencies(texts, lowercase=True)[PRIVATE] == 10
    selection = select_outputs(words, freq, MIN_DOC_FREQ, private_words(texts, spans))
    assert (selection.excluded_rare, selection.excluded_private, selection.size) == (len(RARE), 1, len(FREQUENT) + 1)
    folder = tmp_path_factory.mktemp("index")
    save_index(folder, candidates.subset(selection.allowed), {"beta": 0.7, "lowercase": True, "contextual": False},
               n_trees=10, annoy_seed=1, inputs=candidates)
    return load_index(folder), candidates


def _documents() -> tuple[list[str], list[str]]:
    """Unrelated documents dense in rare and private words, plus some frequent ones: many draws per word."""
    generator = rng.generator(4, "test", "docs")
    pool = [*RARE, PRIVATE, *FREQUENT[:8]]
    texts = [" ".join(pool[j] for j in generator.integers(0, len(pool), 25)) for _ in range(400)]
    return texts, [f"doc{i}" for i in range(len(texts))]


def _emitted(texts: list[str]) -> set[str]:
    return {t.text for text in texts for t in metric_dp_words(text)}


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_rare_and_private_words_are_perturbed_but_never_emitted(index, epsilon: float) -> None:
    loaded, _ = index
    texts, ids = _documents()
    for search in ("exact", "annoy"):
        p = MetricDPPrivatizer(static_embedder(loaded), loaded.searcher(search, "cpu", search_k=200), loaded.words,
                               epsilon=epsilon, beta=0.7, batch_size=512)
        out = privatize_shard(p, texts, ids, key=11)
        emitted = _emitted(out.texts)
        assert out.oov == 0 and out.tokens == 25 * len(texts)  # rare words have an embedding: perturbed, not masked
        assert not emitted & {*RARE, PRIVATE, "[OOV]"}, (search, epsilon)
        assert emitted <= set(FREQUENT) | {"said"}


def test_frequent_words_are_emitted_and_kept_at_huge_epsilon(index) -> None:
    loaded, _ = index
    texts, ids = _documents()
    huge = privatize_shard(MetricDPPrivatizer(static_embedder(loaded), loaded.searcher("exact", "cpu"), loaded.words,
                                              epsilon=1e7, beta=0.7), texts, ids, key=11)
    for before, after in zip(texts, huge.texts, strict=True):  # frequent inputs are their own nearest output
        for a, b in zip(before.split(), after.split(), strict=True):
            assert b == a or a in {*RARE, PRIVATE}
    noisy = privatize_shard(MetricDPPrivatizer(static_embedder(loaded), loaded.searcher("exact", "cpu"), loaded.words,
                                               epsilon=0.05, beta=0.7), texts, ids, key=11)
    assert len(_emitted(noisy.texts)) > len(FREQUENT) // 2  # large noise spreads over the allowed outputs


def test_the_same_draws_do_release_rare_words_from_an_unfiltered_index(index) -> None:
    """Control: the draws above are enough to catch the leak of issue #8 (outputs = every input)."""
    _, candidates = index
    embedder = StaticEmbedder(candidates.words, candidates.vectors, True)
    texts, ids = _documents()
    out = privatize_shard(MetricDPPrivatizer(embedder, ExactSearcher(candidates.vectors), candidates.words,
                                             epsilon=0.05, beta=0.7), texts, ids, key=11)
    assert _emitted(out.texts) & set(RARE)


def test_saved_index_keeps_inputs_apart_from_outputs(index) -> None:
    loaded, candidates = index
    assert loaded.input_words == candidates.words and set(loaded.words) == {*FREQUENT, "said"}
    np.testing.assert_array_equal(loaded.input_vectors, candidates.vectors)
    assert loaded.manifest["format"] == 2 and (loaded.folder / "inputs.txt").exists()
