"""Metric-DP word replacement of whole documents, batched (METHODS.md §2).

For every known token occurrence: μ (projected embedding) + N (``noise.sample_noise``) and the
label of the nearest index item replaces the word in place. Known means "has an embedding" (the
index's input table); the items the searcher returns are the index's OUTPUT vocabulary, which
``indexes.vocabulary`` restricts to words of at least ``min_doc_freq`` training documents and no
privacy span — so a rare word is perturbed into a frequent one, never released into another
document (issue #8, item 4). Punctuation and spacing stay as they were, so the output reads
as text. ε bounds ONE token occurrence; a document of n tokens composes to nε. Each
document's noise comes from its own generator ``rng.generator(key, "metric_dp", doc_id)``, so
the output depends only on the key and the document — never on batch size, shard boundaries
or worker count. Out-of-vocabulary words follow ``oov_policy``: keep (the notebook), mask
(placeholder, default) or drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from textsift import rng
from textsift.errors import ConfigError
from textsift.indexes.store import Searcher
from textsift.mechanisms.metric_dp.embedders import Embedder
from textsift.mechanisms.metric_dp.noise import check_privacy_params, sample_noise
from textsift.rng import Key
from textsift.tokenize import Token, lookup_key, metric_dp_words, replace_tokens

RNG_STAGE = "metric_dp"
OOV_POLICIES = ("keep", "mask", "drop")


@dataclass(frozen=True)
class MetricDPPrivatizer:
    """Everything a shard needs: the embedder, the searcher, the item labels and the setting.

    ``labels[i]`` is the word emitted when the searcher returns item i: the output vocabulary.
    """

    embedder: Embedder
    searcher: Searcher
    labels: Sequence[str]
    epsilon: float
    beta: float
    oov_policy: str = "mask"
    oov_placeholder: str = "[OOV]"
    batch_size: int = 4096

    def __post_init__(self) -> None:
        check_privacy_params(self.epsilon, self.beta)
        if self.oov_policy not in OOV_POLICIES:
            raise ConfigError(f"oov_policy must be one of {', '.join(OOV_POLICIES)} (got {self.oov_policy!r})")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1 (got {self.batch_size})")


@dataclass(frozen=True)
class ShardResult:
    """Privatized texts of a shard (input order), its token counts and, per document, how many words got noise
    (each spends ε: the privacy ledger)."""

    texts: list[str]
    tokens: int = 0
    oov: int = 0
    changed: int = 0
    perturbed: list[int] = field(default_factory=list)

    @staticmethod
    def merge(parts: Sequence[ShardResult]) -> ShardResult:
        """Shards concatenated in order, counts summed (the result of processing them together)."""
        return ShardResult([t for p in parts for t in p.texts], sum(p.tokens for p in parts),
                           sum(p.oov for p in parts), sum(p.changed for p in parts),
                           [n for p in parts for n in p.perturbed])


def _batches(sizes: Sequence[int], limit: int) -> list[list[int]]:
    """Consecutive documents grouped so a group holds at most ``limit`` tokens (or one document)."""
    groups: list[list[int]] = [[]]
    held = 0
    for i, size in enumerate(sizes):
        if groups[-1] and held + size > limit:
            groups.append([])
            held = 0
        groups[-1].append(i)
        held += size
    return [g for g in groups if g]


def _rebuild(p: MetricDPPrivatizer, text: str, tokens: list[Token], known: np.ndarray,
             outputs: list[str], protected: frozenset[str] = frozenset()) -> tuple[str, int]:
    """The document with known words replaced and OOV words handled; and its changed count.

    A word in ``protected`` (case-folded) is never emitted unchanged: a draw that lands on the
    word itself, or a kept OOV word, becomes the placeholder. A document whose every word was
    dropped becomes the placeholder: outputs are never empty.
    """
    replacements: dict[int, str | None] = {}
    changed = 0
    produced = iter(outputs)
    for i, (token, is_known) in enumerate(zip(tokens, known, strict=True)):
        guarded = token.text.casefold() in protected
        if is_known:
            new = next(produced)
            if guarded and new.casefold() == token.text.casefold():
                new = p.oov_placeholder
            replacements[i] = new
            changed += new != lookup_key(token.text, p.embedder.lowercase)
        elif guarded and p.oov_policy == "keep":
            replacements[i] = p.oov_placeholder
            changed += 1
        elif p.oov_policy != "keep":
            replacements[i] = p.oov_placeholder if p.oov_policy == "mask" else None
            changed += 1
    out = replace_tokens(text, tokens, replacements)
    return (out if out.strip() or not text.strip() else p.oov_placeholder), changed


def _noisy_queries(p: MetricDPPrivatizer, mus: list[np.ndarray], doc_ids: list[str], key: Key) -> np.ndarray:
    """μ + N for every known token of the batch; each document's noise from its own generator."""
    noise = [sample_noise(rng.generator(key, RNG_STAGE, doc_id), len(mu), mu.shape[1], p.epsilon, p.beta)
             for doc_id, mu in zip(doc_ids, mus, strict=True)]
    return np.concatenate(mus) + np.concatenate(noise)


def _privatize_batch(p: MetricDPPrivatizer, texts: list[str], tokens: list[list[Token]], doc_ids: list[str],
                     key: Key, protected: list[frozenset[str]]) -> ShardResult:
    embedded = p.embedder.embed([[t.text for t in doc] for doc in tokens])
    nearest = p.searcher.nearest(_noisy_queries(p, [mu for _, mu in embedded], doc_ids, key))
    out, changed, oov, cursor, perturbed = [], 0, 0, 0, []
    for text, doc, (known, mu), guarded in zip(texts, tokens, embedded, protected, strict=True):
        labels = [p.labels[j] for j in nearest[cursor:cursor + len(mu)]]
        cursor += len(mu)
        new, doc_changed = _rebuild(p, text, doc, known, labels, guarded)
        out.append(new)
        changed += doc_changed
        oov += int((~known).sum())
        perturbed.append(int(known.sum()))
    return ShardResult(out, sum(len(doc) for doc in tokens), oov, changed, perturbed)


def words_outside(text: str, regions: Sequence[tuple[int, int]] = ()) -> list[Token]:
    """The document's metric-DP words (:func:`textsift.tokenize.metric_dp_words`) that overlap none of ``regions``
    (a hybrid's stand-ins: left as they are, spending no ε)."""
    tokens = metric_dp_words(text)
    if not regions:
        return tokens
    return [t for t in tokens if not any(t.start < end and start < t.end for start, end in regions)]


def privatize_shard(p: MetricDPPrivatizer, texts: Sequence[str], doc_ids: Sequence[str], key: Key,
                    protected: Sequence[frozenset[str]] | None = None,
                    frozen: Sequence[Sequence[tuple[int, int]]] | None = None) -> ShardResult:
    """Privatize one shard of documents (a pure function: safe to fan out over workers).

    Args:
        p: the privatizer (picklable: an Annoy searcher re-opens its file by path).
        texts: the shard's documents.
        doc_ids: their ids (each keys its own noise generator).
        key: the release key (textsift.secret_key; a public seed only in tests and benchmarks).
        protected: per document, case-folded words never to be emitted unchanged (the words of
            its detected spans, ``replace_detected``).
        frozen: per document, character regions whose words are left as they are (a hybrid's stand-ins).
    """
    tokens = [words_outside(text, frozen[k] if frozen is not None else ()) for k, text in enumerate(texts)]
    guarded = list(protected) if protected is not None else [frozenset()] * len(texts)
    parts = [
        _privatize_batch(p, [texts[i] for i in group], [tokens[i] for i in group], [doc_ids[i] for i in group], key,
                         [guarded[i] for i in group])
        for group in _batches([len(doc) for doc in tokens], p.batch_size)
    ]
    return ShardResult.merge(parts)
