"""word2vec and fastText vectors: trained with gensim on the corpus, or read from a file.

METHODS.md §2 offline default: train on the corpus's training split (phrases of metric-DP
words as sentences), seeded and single-threaded so the vectors are reproducible; word2vec is
uncased (the notebook's), fastText cased. A user may instead point ``vectors_path`` to a
word2vec-format file (text or binary, detected from its content).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from textsift.embeddings.vectors import WordVectors, stable_hash
from textsift.errors import InputError

GensimKind = Literal["word2vec", "fasttext"]
MAX_FASTTEXT_BUCKETS = 2_000_000  # gensim's default n-gram hash buckets
BUCKETS_PER_WORD = 10  # n-gram buckets per distinct training word, so memory scales with the corpus


def train_vectors(
    kind: GensimKind, sentences: Sequence[Sequence[str]], *, dim: int, window: int, min_count: int,
    epochs: int, seed: int,
) -> WordVectors:
    """Train word2vec (CBOW) or fastText on ``sentences`` (already cased as the kind expects).

    Args:
        kind: ``word2vec`` (uncased lookups) or ``fasttext`` (cased lookups).
        sentences: token lists, e.g. ``metric_dp_phrases`` of the training split.
        dim, window, min_count, epochs: gensim's vector_size, window, min_count, epochs.
        seed: gensim seed (derived from textsift.rng by the caller); workers=1 for reproducibility.
    """
    from gensim.models import FastText, Word2Vec

    common = {"vector_size": dim, "window": window, "min_count": min_count, "epochs": epochs,
              "seed": seed, "workers": 1, "hashfxn": stable_hash}
    if kind == "word2vec":
        model = Word2Vec(sentences=list(sentences), **common)
    else:
        distinct = len({w for sentence in sentences for w in sentence})
        buckets = min(MAX_FASTTEXT_BUCKETS, max(1000, BUCKETS_PER_WORD * distinct))
        model = FastText(sentences=list(sentences), bucket=buckets, **common)
    wv = model.wv
    return WordVectors(list(wv.index_to_key), np.asarray(wv.vectors, dtype=np.float32), kind == "word2vec")


def _is_binary(path: Path) -> bool:
    """word2vec binary format? Compressed files by name (``.bin.gz``), plain files by content."""
    if path.suffix in {".gz", ".bz2"}:
        return path.stem.endswith(".bin")
    with path.open("rb") as handle:
        handle.readline()  # the "<count> <dim>" header is text in both formats
        sample = handle.read(4096)
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start < len(sample) - 4  # a character cut at the sample's end is still text
    return False


def load_vectors_file(path: str | Path, lowercase: bool) -> WordVectors:
    """Read a word2vec-format vectors file (text or binary).

    Args:
        path: the file; ``.gz``/``.bz2`` compression is handled by gensim.
        lowercase: the source's casing (True for word2vec, False for fastText).
    """
    from gensim.models import KeyedVectors

    path = Path(path)
    if not path.is_file():
        raise InputError(f"vectors file {path} does not exist")
    wv = KeyedVectors.load_word2vec_format(str(path), binary=_is_binary(path))
    return WordVectors(list(wv.index_to_key), np.asarray(wv.vectors, dtype=np.float32), lowercase)
