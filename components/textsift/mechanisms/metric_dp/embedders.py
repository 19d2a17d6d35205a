"""Query vectors μ of a document's words in the projected space (METHODS.md §2).

Static sources look each word up in the index's projected INPUT table (``inputs.txt`` +
``input_vectors.npy``: every corpus word with an embedding, also the rare and private ones that
the index never outputs, so they are perturbed rather than masked or released); the contextual
source embeds the words in their document and projects them with the index's matrix. Both
answer, per document, which words are known and their μ; the searcher then picks an output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from textsift.indexes.projection import project
from textsift.indexes.store import LoadedIndex
from textsift.tokenize import lookup_key

if TYPE_CHECKING:
    from textsift.embeddings.bert import ContextualEncoder

Embedded = tuple[np.ndarray, np.ndarray]  # (known mask over the words, (n_known, m) float32 μ)


class Embedder(Protocol):
    lowercase: bool

    def embed(self, docs: Sequence[Sequence[str]]) -> list[Embedded]:
        """Per document, which words are known and the projected μ of the known ones (METHODS.md §2)."""
        ...


class StaticEmbedder:
    """Look words up in a projected static vocabulary.

    Args:
        words: the index's distinct input vocabulary, in row order (a superset of its outputs).
        vectors: (len(words), m) projected vectors.
        lowercase: lower-case words before the lookup (word2vec, GloVe, uncased BERT).
    """

    def __init__(self, words: Sequence[str], vectors: np.ndarray, lowercase: bool) -> None:
        self.lowercase = lowercase
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.lookup = {w: i for i, w in enumerate(words)}

    def embed(self, docs: Sequence[Sequence[str]]) -> list[Embedded]:
        """Per document, which words the input table holds (after casing) and their projected vectors."""
        out = []
        for words in docs:
            ids = np.fromiter((self.lookup.get(lookup_key(w, self.lowercase), -1) for w in words),
                              dtype=np.int64, count=len(words))
            known = ids >= 0
            out.append((known, self.vectors[ids[known]]))
        return out


def static_embedder(index: LoadedIndex) -> StaticEmbedder:
    """The embedder of a saved static index: its input table, under the manifest's casing."""
    return StaticEmbedder(index.input_words, index.input_vectors, bool(index.manifest["lowercase"]))


class ContextualEmbedder:
    """Embed words in context (BERT hidden state 0) and project them with the index's matrix."""

    def __init__(self, encoder: ContextualEncoder, projection: np.ndarray | None) -> None:
        self.encoder = encoder
        self.projection = projection
        self.lowercase = encoder.lowercase

    def embed(self, docs: Sequence[Sequence[str]]) -> list[Embedded]:
        """Per document, the known words' BERT hidden state 0 in context, projected with the index's matrix."""
        return [(known, project(vectors, self.projection)) for known, vectors in self.encoder.encode(docs)]
