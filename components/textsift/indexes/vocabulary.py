"""Which words an index may OUTPUT: words the corpus uses publicly, in enough documents.

METHODS.md §2 replaces each word by the vocabulary word nearest to its noisy embedding, so the
output vocabulary is released into every document the index privatizes. Raw corpus words make
that a leak: a surname or an e-mail local part of one document becomes a possible output for
all others (project issue #8, item 4). An index therefore splits its words in two:

- inputs: every corpus word with an embedding, rare ones included. A word that is looked up
  is perturbed (μ + N, nearest output) instead of being released or masked;
- outputs: the inputs whose *public document frequency* — the number of distinct training
  documents that use the word outside every private span — is at least ``min_doc_freq``.
  A word seen only as personal data (a name, an e-mail part) never qualifies, however often it
  occurs; an everyday word that also sits inside a span ("and" in "Smith and Sons") does, since
  many documents use it publicly. Spans are anything with ``start``/``end`` character offsets:
  the corpus's gold spans today, a detector's predicted spans later.

The per-token guarantee is unchanged: nearest-neighbour release is ε-metric-DP for any output
set fixed before privatizing (the index's, as before, only smaller); ε still bounds one token
occurrence. What the filter adds is that every word a document can receive is used outside
personal data by at least ``min_doc_freq`` training documents. Pure: texts and spans in, sets
and masks out; the stage does the I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from textsift.corpus import CharSpan
from textsift.errors import ConfigError
from textsift.tokenize import lookup_key, metric_dp_words


def _overlaps(start: int, end: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start < span_end and span_start < end for span_start, span_end in ranges)


def document_frequencies(
    texts: Sequence[str], lowercase: bool, spans: Sequence[Iterable[CharSpan]] | None = None,
) -> Counter[str]:
    """Number of distinct documents that use each metric-DP word outside their private spans.

    Counts documents, not occurrences; an occurrence overlapping one of its document's
    ``spans`` does not count (with no spans, every occurrence does).

    Args:
        texts: the training split's documents.
        lowercase: the index's casing (words are counted under their lookup key).
        spans: per document, its private spans (gold or detected); same length as ``texts``.
    """
    if spans is not None and len(spans) != len(texts):
        raise ValueError(f"document_frequencies: {len(texts)} texts but {len(spans)} span lists")
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        ranges = [(int(s.start), int(s.end)) for s in spans[i]] if spans is not None else []
        counts.update({lookup_key(t.text, lowercase) for t in metric_dp_words(text)
                       if not _overlaps(t.start, t.end, ranges)})
    return counts


def private_words(texts: Sequence[str], spans: Sequence[Iterable[CharSpan]]) -> frozenset[str]:
    """Lower-cased metric-DP words of ``texts`` that overlap one of their document's spans.

    Args:
        texts: documents (every split: a test-split name must not become an output either).
        spans: per document, its private spans (gold or detected); same length as ``texts``.
    """
    if len(texts) != len(spans):
        raise ValueError(f"private_words: {len(texts)} texts but {len(spans)} span lists")
    banned: set[str] = set()
    for text, doc_spans in zip(texts, spans, strict=True):
        ranges = [(int(s.start), int(s.end)) for s in doc_spans]
        if ranges:
            banned.update(t.text.lower() for t in metric_dp_words(text) if _overlaps(t.start, t.end, ranges))
    return frozenset(banned)


@dataclass(frozen=True)
class OutputSelection:
    """Which candidate items an index may output, and why the others may not.

    Counts are over distinct words below ``min_doc_freq`` public documents: ``excluded_private``
    those that occur inside a private span (personal data), ``excluded_rare`` the others.

    Attributes:
        allowed: boolean mask over the candidate items (in their order).
        min_doc_freq: the threshold applied (distinct training documents).
        candidates: distinct candidate words.
        excluded_private: excluded words that occur inside a private span.
        excluded_rare: other words used in fewer than ``min_doc_freq`` training documents.
    """

    allowed: np.ndarray
    min_doc_freq: int
    candidates: int
    excluded_private: int
    excluded_rare: int

    @property
    def size(self) -> int:
        """Distinct words of the output vocabulary."""
        return self.candidates - self.excluded_private - self.excluded_rare

    def metrics(self) -> dict[str, float]:
        """Counts for the manifest, metrics JSON and MLflow (no words)."""
        return {"vocab_size": float(self.size), "candidate_words": float(self.candidates),
                "min_doc_freq": float(self.min_doc_freq), "excluded.doc_freq": float(self.excluded_rare),
                "excluded.private_span": float(self.excluded_private)}


def select_outputs(
    words: Sequence[str], doc_freq: Counter[str] | dict[str, int], min_doc_freq: int, banned: Iterable[str],
) -> OutputSelection:
    """Mark the items whose word may be output: used outside private spans in enough documents.

    Args:
        words: item labels as looked up (a static table's words, or the tokens of contextual
            pairs, which repeat).
        doc_freq: :func:`document_frequencies` of the training split with its spans, same casing.
        min_doc_freq: minimum number of distinct training documents (≥ 1).
        banned: :func:`private_words` (lower-cased) of every split, gold and/or detected: names why
            an excluded word was excluded.
    """
    if min_doc_freq < 1:
        raise ConfigError(f"min_doc_freq must be >= 1 (got {min_doc_freq})")
    banned = frozenset(banned)
    verdict: dict[str, str] = {}
    for word in words:
        if word not in verdict:
            verdict[word] = ("ok" if doc_freq.get(word, 0) >= min_doc_freq
                             else "private" if word.lower() in banned else "rare")
    reasons = Counter(verdict.values())
    allowed = np.fromiter((verdict[w] == "ok" for w in words), dtype=bool, count=len(words))
    return OutputSelection(allowed, min_doc_freq, len(verdict), reasons["private"], reasons["rare"])


def every_output(words: Sequence[str]) -> OutputSelection:
    """Every item of a public vocabulary may be output: filtered by the corpus, the public words missing from the
    index would be the corpus's private and rare ones (``vocabulary: public``)."""
    return OutputSelection(np.ones(len(words), dtype=bool), 0, len(set(words)), 0, 0)


def require_outputs(selection: OutputSelection, name: str, minimum: int = 2) -> None:
    """Raise ConfigError, naming the counts and the key to lower, when too few words may be output."""
    if selection.size < minimum:
        raise ConfigError(
            f"indexes.sources.{name}: the output vocabulary has {selection.size} word(s), fewer than {minimum}: "
            f"of {selection.candidates} candidate words, {selection.excluded_rare} occur in fewer than "
            f"min_doc_freq={selection.min_doc_freq} training documents and {selection.excluded_private} lie "
            f"inside private spans. Lower indexes.sources.{name}.min_doc_freq (or use a larger corpus)."
        )
