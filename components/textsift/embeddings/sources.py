"""One entry point per embedding-source shape, dispatching on ``kind`` (METHODS.md §2).

``static_vectors``: word2vec / fastText (trained on the training split, or a vectors file),
GloVe, BERT static — restricted to the corpus vocabulary (an index's input table; its outputs
are chosen by ``indexes.vocabulary``). ``contextual_pairs``: the
(token, first-hidden-state vector) pairs of a seeded sample of training documents that a
``bert_contextual`` index is built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from textsift import rng
from textsift.artifacts import ArtifactSource
from textsift.embeddings.gensim_vectors import load_vectors_file, train_vectors
from textsift.embeddings.glove import load_glove
from textsift.embeddings.locate import model_folder
from textsift.embeddings.vectors import WordVectors
from textsift.errors import ConfigError
from textsift.indexes.params import EmbeddingSourceParams
from textsift.tokenize import metric_dp_phrases, metric_dp_words

if TYPE_CHECKING:
    from textsift.embeddings.bert import ContextualEncoder

PAIR_DOCS_PER_CALL = 256


def training_sentences(texts: Iterable[str], lowercase: bool) -> list[list[str]]:
    """Phrases of metric-DP words of every text (the gensim training sentences)."""
    return [[w.lower() for w in p] if lowercase else p for text in texts for p in metric_dp_phrases(text)]


def corpus_words(texts: Iterable[str]) -> set[str]:
    """The distinct metric-DP words (surface forms) of a corpus."""
    return {t.text for text in texts for t in metric_dp_words(text)}


def static_vectors(
    source: EmbeddingSourceParams, *, name: str, train_texts: Sequence[str], words: set[str], seed: int,
    root: Path, artifacts: ArtifactSource, device: str,
) -> WordVectors:
    """The static embedding table of ``source`` restricted to the corpus ``words``.

    Args:
        source: ``indexes.sources[name]``.
        name: the source's key (seeds derive from it).
        train_texts: the training split's texts (word2vec/fastText training).
        words: the corpus vocabulary (surface forms; casing is applied per source).
        seed: root seed; gensim's seed is ``rng.stable_key(seed, "build_indexes.gensim", name)``.
        root: project folder (relative ``vectors_path``/``model_path``).
        artifacts: where ``model_path: fill_in`` is fetched from.
        device: where a BERT is loaded.
    """
    kind = source.kind
    if kind in ("word2vec", "fasttext"):
        lowercase = kind == "word2vec"
        if source.vectors_path:
            path = Path(source.vectors_path)
            table = load_vectors_file(path if path.is_absolute() else root / path, lowercase)
        else:
            table = train_vectors(
                kind, training_sentences(train_texts, lowercase), dim=source.dim, window=source.window,
                min_count=source.min_count, epochs=source.epochs,
                seed=rng.stable_key(seed, "build_indexes.gensim", name) % (2**31),
            )
    elif kind == "glove":
        table = load_glove(words)
    elif kind == "bert_static":
        # transformers and torch: imported by BERT sources only (seconds of every other stage's start)
        from textsift.embeddings.bert import load_bert, static_table

        table = static_table(*load_bert(model_folder(source.model_path, root, artifacts,
                                                                  f"indexes.sources.{name}.model_path"), device))
    else:
        raise ConfigError(f"indexes.sources.{name}: kind {kind!r} has no static table")
    return table.restrict(words)


def sample_documents(n_docs: int, fraction: float, generator: np.random.Generator) -> np.ndarray:
    """Sorted positions of a seeded sample of round(fraction · n_docs) documents (at least one)."""
    size = min(n_docs, max(1, round(fraction * n_docs)))
    return np.sort(generator.choice(n_docs, size=size, replace=False))


def contextual_pairs(encoder: ContextualEncoder, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(token, hidden-state-0 vector) for every known word of ``texts``, in text order."""
    tokens: list[str] = []
    blocks: list[np.ndarray] = []
    for start in range(0, len(texts), PAIR_DOCS_PER_CALL):
        docs = [[t.text for t in metric_dp_words(text)] for text in texts[start:start + PAIR_DOCS_PER_CALL]]
        for words, (known, vectors) in zip(docs, encoder.encode(docs), strict=True):
            tokens.extend(k for k, ok in zip(encoder.keys(words), known, strict=True) if ok)
            blocks.append(vectors)
    return tokens, np.concatenate(blocks) if blocks else np.zeros((0, encoder.dim), dtype=np.float32)
