"""The ``metric_dp`` adapter of privatize@<setting> (METHODS.md §2).

Loads the index ``data/indexes/<setting.index>/`` once (β, casing and projection from its
manifest), builds the privatizer — words are looked up in the index's input table (rare words
included, so they are perturbed) and replaced by the nearest OUTPUT item, which is never a rare
or private word (``indexes.vocabulary``) — (Annoy on CPU, exact search on CUDA, per ``setting.search``)
and privatizes every document of every split in shards of ``SHARD_DOCS`` documents with the
pure :func:`~textsift.mechanisms.metric_dp.privatizer.privatize_shard` — the function a
Prefect/Dask fan-out calls per shard. ε is per token occurrence (a document of n tokens
composes to nε). Row order is kept; the common stage writes the corpus and leak metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from textsift import rng
from textsift.corpus import Span
from textsift.detection.types import ENTITY_TYPES
from textsift.errors import ConfigError
from textsift.evaluation.geometry import deniability, sample_items
from textsift.indexes.params import GeometryParams
from textsift.indexes.store import LoadedIndex, Searcher
from textsift.mechanisms.base import Documents, Mechanism, PrivatizeResult, Resources
from textsift.mechanisms.metric_dp.embedders import ContextualEmbedder, Embedder, static_embedder
from textsift.mechanisms.metric_dp.loaded_modules import CONTEXTUAL_ENCODER, STAND_INS
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, ShardResult, privatize_shard, words_outside
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.params import RedactSetting
from textsift.record_ids import short_id
from textsift.rng import Key
from textsift.tokenize import metric_dp_words

log = logging.getLogger("textsift")
SHARD_DOCS = 2000


def _embedder(index: LoadedIndex, setting: MetricDPSetting, resources: Resources) -> Embedder:
    if not index.manifest["contextual"]:
        return static_embedder(index)
    bert = MetricDP().load(CONTEXTUAL_ENCODER, setting, resources.params)
    # the encoder the index was built with, from its manifest (build_indexes@<index> declares the source)
    folder = resources.model_folder(index.manifest["model"], f"indexes.sources.{setting.index}.model_path")
    encoder = bert.ContextualEncoder.load(folder, resources.device)
    return ContextualEmbedder(encoder, index.projection)


def load_privatizer(setting: MetricDPSetting, resources: Resources) -> MetricDPPrivatizer:
    """The privatizer of ``setting`` over its saved index (opened once per run, never per word)."""
    index = resources.index(setting.index)
    embedder = _embedder(index, setting, resources)
    searcher = index.searcher(setting.search, resources.device, setting.search_k)
    return MetricDPPrivatizer(
        embedder=embedder, searcher=searcher, labels=index.words, epsilon=setting.epsilon,
        beta=float(index.manifest["beta"]), oov_policy=setting.oov_policy, oov_placeholder=setting.oov_placeholder,
        batch_size=setting.batch_size,
    )


class MetricDP(Mechanism):
    """Metric-DP word replacement (METHODS.md §2), optionally with redaction's stand-ins for detected spans."""

    per_document = True  # each word's noise is keyed by (release key, document's draw name, position)
    additive_metrics = ("tokens",)  # a total: a chunked run sums it
    metric_weight = "tokens"  # its rates are per token: a chunked run weighs chunks by their tokens
    guarantee = "metric-DP: epsilon per perturbed word, n*epsilon per document (METHODS.md section 2)"

    def modules(self, setting: MetricDPSetting, params: Any) -> tuple[str, ...]:
        """The BERT encoder over a contextual index, redaction's stand-ins for a hybrid (``stand_ins``): a plain
        metric-DP setting over a static index runs neither, so editing them re-runs none of its instances."""
        contextual = params.indexes.sources[setting.index].kind == "bert_contextual"
        return (*((CONTEXTUAL_ENCODER,) if contextual else ()), *((STAND_INS,) if setting.stand_ins else ()))

    def serving_refusal(self, setting: MetricDPSetting, params: Any) -> str | None:
        """Served over an index of a public vocabulary (``vocabulary: public``: published vectors and words, nothing
        of the corpus) that masks or drops the words outside it; not over a corpus index, whose words and vectors a
        packed model would publish, nor with ``oov_policy: keep``, which would answer every word outside the
        vocabulary (a rare surname) as sent."""
        if params.indexes.sources[setting.index].vocabulary != "public":
            return (f"its index ({setting.index}) holds words and vectors learnt from the corpus: a served model would "
                    "publish them (an index with vocabulary: public can be served)")
        if setting.oov_policy == "keep":
            return ("oov_policy: keep would answer every word outside its public vocabulary unchanged (rare names "
                    "first)")
        return None

    def entity_types(self, setting: MetricDPSetting) -> list[str] | None:
        """Its ``labels`` when it replaces detected words (``replace_detected``); None otherwise, when the detector, if
        it runs at all, only places a hybrid's stand-ins (``stand_ins``, fixed when the setting was judged)."""
        if not setting.replace_detected:
            return None
        return list(ENTITY_TYPES if setting.labels is None else setting.labels)

    def fills_from_corpus(self, setting: MetricDPSetting, params: Any) -> bool:
        """Over a corpus index: its output words are corpus words. Over a public vocabulary: never (GloVe's words;
        a hybrid's stand-ins are redaction's public ones)."""
        return params.indexes.sources[setting.index].vocabulary != "public"

    def release_context(self, setting: MetricDPSetting, resources: Resources) -> dict[str, Any]:
        """The index's manifest (its source, β, projection seed, vocabulary digests): the same noise over a rebuilt
        index would be two equations in one draw (another β rescales it exactly)."""
        return {"index": resources.index(setting.index).manifest}

    def setting_metrics(self, setting: MetricDPSetting, resources: Resources, key: Key) -> dict[str, float]:
        """The plausible-deniability summaries at the setting's ε over its index (:func:`deniability_at_epsilon`)."""
        index = resources.index(setting.index)  # only its search: no embedder (a contextual one loads a BERT)
        return deniability_at_epsilon(index, index.searcher(setting.search, resources.device, setting.search_k),
                                      setting, resources.params.indexes.geometry, key)

    def privatize(self, docs: Documents, setting: MetricDPSetting, resources: Resources, key: Key, *,
                  vault: bool = False) -> PrivatizeResult:
        """Privatized texts (input order kept), the mechanism's metrics and each document's n·ε for its n perturbed
        words (sequential composition, METHODS.md §2: the ledger).

        Metrics: ``tokens_changed_fraction`` and ``oov_rate`` (over all token occurrences),
        ``tokens_per_s``, ``tokens``, ``epsilon`` (per token) and ``beta`` (from the index); the plausible
        deniability at this ε is the setting's (:meth:`setting_metrics`).
        """
        privatizer = load_privatizer(setting, resources)
        doc_ids = docs.draw_names
        regions = stand_in_regions(docs, setting, resources)
        if setting.max_epsilon_per_document is not None:
            check_budget(docs, perturbed_counts(privatizer, docs.texts, regions), setting)
        protected = (protected_words(docs.texts, resources.detected(docs, setting.labels))
                     if setting.replace_detected else [frozenset()] * len(docs.texts))
        texts, frozen = (with_stand_ins(docs, regions, setting, key,
                                        self.load(STAND_INS, setting, resources.params).redact_text)
                         if regions is not None else (docs.texts, [[] for _ in docs.texts]))
        started = time.perf_counter()
        result = ShardResult.merge([
            privatize_shard(privatizer, texts[i:i + SHARD_DOCS], doc_ids[i:i + SHARD_DOCS], key,
                            protected[i:i + SHARD_DOCS], frozen[i:i + SHARD_DOCS])
            for i in range(0, len(texts), SHARD_DOCS)
        ])
        seconds = time.perf_counter() - started
        tokens = max(result.tokens, 1)
        metrics = {
            "tokens_changed_fraction": result.changed / tokens, "oov_rate": result.oov / tokens,
            "tokens_per_s": result.tokens / seconds if seconds else 0.0, "tokens": float(result.tokens),
            "epsilon": setting.epsilon, "beta": privatizer.beta,
        }
        log.info("metric_dp@%s: %d tokens, %.1f%% changed, %.1f%% OOV, %.0f tokens/s", setting.index, result.tokens,
                 100 * metrics["tokens_changed_fraction"], 100 * metrics["oov_rate"], metrics["tokens_per_s"])
        return PrivatizeResult(result.texts, metrics, spent=[n * setting.epsilon for n in result.perturbed])


def stand_in_regions(docs: Documents, setting: MetricDPSetting, resources: Resources) -> list[list[Span]] | None:
    """A hybrid's regions per document: every occurrence of its detected ``stand_ins`` spans, merged
    (:func:`~textsift.mechanisms.protected_spans.consistent_spans`); None for plain metric-DP."""
    if not setting.stand_ins:
        return None
    detected = resources.detected(docs, setting.stand_ins)
    return [outermost(consistent_spans(text, spans)) for text, spans in zip(docs.texts, detected, strict=True)]


def with_stand_ins(docs: Documents, regions: list[list[Span]], setting: MetricDPSetting, key: Key,
                   redact_text: Callable[..., tuple[str, int]]) -> tuple[list[str], list[list[tuple[int, int]]]]:
    """The texts with a hybrid's regions replaced by redaction's stand-ins (``redact_text`` of
    :mod:`textsift.mechanisms.redact.redactor`), and where each stand-in now lies."""
    stand_ins = RedactSetting(kind="redact", labels=setting.stand_ins)
    texts, frozen = [], []
    for text, doc_regions, owner in zip(docs.texts, regions, docs.draw_names, strict=True):
        placed: list[Span] = []
        texts.append(redact_text(text, doc_regions, stand_ins, key, owner, placed=placed)[0])
        frozen.append([(s.start, s.end) for s in placed])
    return texts, frozen


def perturbed_counts(privatizer: MetricDPPrivatizer, texts: Sequence[str],
                     regions: Sequence[Sequence[Span]] | None = None) -> list[int]:
    """Per document, how many words receive noise (those its index knows outside a hybrid's stand-in ``regions``;
    METHODS.md §2): ε is spent per word. The text outside the regions is the same before and after the stand-ins
    go in, so counting on the original counts what the privatizer perturbs."""
    spans = regions if regions is not None else [()] * len(texts)
    embedded = privatizer.embedder.embed([[t.text for t in words_outside(text, [(s.start, s.end) for s in doc])]
                                          for text, doc in zip(texts, spans, strict=True)])
    return [int(known.sum()) for known, _ in embedded]


def check_budget(docs: Documents, counts: Sequence[int], setting: MetricDPSetting) -> None:
    """ConfigError naming the documents whose n·ε would exceed ``max_epsilon_per_document``."""
    limit = setting.max_epsilon_per_document
    assert limit is not None
    over = [doc_id for doc_id, n in zip(docs.ids, counts, strict=True) if n * setting.epsilon > limit]
    if over:
        raise ConfigError(
            f"metric_dp: {len(over)} documents would spend more than max_epsilon_per_document={limit:g} "
            f"(epsilon {setting.epsilon:g} per word; at most {int(limit // setting.epsilon)} words each): "
            f"{', '.join(short_id(d) for d in over[:10])}{' ...' if len(over) > 10 else ''}; raise the budget, "
            "lower epsilon or split long documents (ingest.max_chars)")


def protected_words(texts: list[str], spans: list[list[Span]]) -> list[frozenset[str]]:
    """Per document, the case-folded words of its detected spans at every occurrence (never emitted unchanged)."""
    out = []
    for text, doc_spans in zip(texts, spans, strict=True):
        regions = consistent_spans(text, doc_spans)
        out.append(frozenset(t.text.casefold() for t in metric_dp_words(text)
                             if any(t.start < r.end and r.start < t.end for r in regions)))
    return out


def deniability_at_epsilon(
    index: LoadedIndex, searcher: Searcher, setting: MetricDPSetting, geometry: GeometryParams, key: Key
) -> dict[str, float]:
    """N_w and S_w (Feyisetan et al. 2020) at the setting's ε, over a seeded sample of the index.

    Same sample size and M as the index's geometry experiments (``indexes.geometry``), so a
    setting's numbers line up with the curves of build_indexes.
    """
    sample = sample_items(len(index.vectors), geometry.vocab_sample,
                          rng.generator(key, "privatize.deniability", f"{setting.index}/sample"))
    _, label_ids = np.unique(np.asarray(index.words, dtype=object), return_inverse=True)
    run = deniability(index.vectors, label_ids, sample, setting.epsilon, float(index.manifest["beta"]), geometry.draws,
                      searcher, rng.generator(key, "privatize.deniability", f"{setting.index}/draws"))
    return {"deniability.N_w.mean": float(np.mean(run.n_w)), "deniability.N_w.median": float(np.median(run.n_w)),
            "deniability.S_w.mean": float(np.mean(run.s_w)), "deniability.S_w.median": float(np.median(run.s_w)),
            "deniability.noise_distance": run.noise_distance}
