"""The common shape of a static embedding source: words, their vectors, their casing.

METHODS.md §2: the vocabulary of an index is the intersection of the corpus vocabulary and
the embedding vocabulary (:meth:`WordVectors.restrict`) — the words it can look up; the words
it may output are further restricted by ``indexes.vocabulary`` (frequent, never private).
``lowercase`` says how corpus words are looked up (word2vec and GloVe are uncased, fastText and
cased BERT vocabularies are not).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from textsift.tokenize import is_metric_dp_word, lookup_key


def vocab_sha256(words: Sequence[str]) -> str:
    """Digest of an ordered vocabulary (stored in manifests instead of the words themselves)."""
    digest = hashlib.sha256()
    for word in words:
        digest.update(word.encode("utf-8") + b"\n")
    return digest.hexdigest()


def stable_hash(text: str) -> int:
    """A process-independent 32-bit hash (gensim's ``hashfxn``; Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest(), "little")


@dataclass(frozen=True)
class WordVectors:
    """A static embedding table.

    Attributes:
        words: distinct vocabulary entries, row order of ``vectors``.
        vectors: (len(words), d) float32 embeddings.
        lowercase: whether lookups lower-case the corpus word first.
    """

    words: list[str]
    vectors: np.ndarray
    lowercase: bool

    @property
    def dim(self) -> int:
        """The embedding dimension d (columns of ``vectors``)."""
        return int(self.vectors.shape[1])

    def restrict(self, corpus_words: Iterable[str]) -> WordVectors:
        """Only the entries that are corpus words (after casing) and single metric-DP words.

        Row order follows the embedding table, so the result is deterministic.
        """
        wanted = {lookup_key(w, self.lowercase) for w in corpus_words}
        rows = [i for i, w in enumerate(self.words) if w in wanted and is_metric_dp_word(w)]
        return WordVectors([self.words[i] for i in rows], np.asarray(self.vectors[rows], dtype=np.float32),
                           self.lowercase)
