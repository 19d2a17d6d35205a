"""DataSifterText end to end on a list of documents (METHODS.md §1): mask -> fill -> obfuscate.

Pure library code: word lists arrive resolved (files read by the caller) and the fill-in model
arrives loaded. Every draw is keyed by (key, stage, document id): masking uses
``datasifter.mask``, fill-in ``datasifter.fill``, partners ``datasifter.partner``, clustering
``datasifter.kmeans``; so a document's output does not depend on batch size or row order of the
masking and fill-in steps. Labels and ids are not touched (L* = L): texts come back in input order.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from textsift.corpus import Span
from textsift.mechanisms.datasifter.fill import FillOptions, fill_documents
from textsift.mechanisms.datasifter.masking import MaskingRule, MaskResult, mask_document
from textsift.mechanisms.datasifter.obfuscation import obfuscate
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.partners import NO_PARTNER
from textsift.mechanisms.protected_spans import consistent_spans
from textsift.models.fill_in import FillInModel
from textsift.rng import Key, generator, torch_seed
from textsift.tokenize import Token, normal_form, replace_tokens, words
from textsift.word_lists import stop_words

log = logging.getLogger("textsift")


@dataclass(frozen=True)
class SiftResult:
    """Privatized texts (input order) and aggregate metrics of the run (no text in them)."""

    texts: list[str]
    metrics: dict[str, float]


def covered_tokens(tokens: Sequence[Token], spans: Sequence[Span]) -> np.ndarray:
    """Which word tokens overlap one of ``spans`` (boolean per token)."""
    return np.array([any(t.start < s.end and s.start < t.end for s in spans) for t in tokens], dtype=bool)


def mask_corpus(
    tokens: Sequence[Sequence[Token]], doc_ids: Sequence[str], rule: MaskingRule, key: Key,
    sensitive_words: Sequence[Iterable[str]] | None = None, forced: Sequence[np.ndarray] | None = None,
) -> list[MaskResult]:
    """§1.2 for every document, each with its own generator (key, "datasifter.mask", doc id)."""
    results = []
    for i, (doc_tokens, doc_id) in enumerate(zip(tokens, doc_ids, strict=True)):
        extra = sensitive_words[i] if sensitive_words is not None else ()
        classes = rule.classes([t.text for t in doc_tokens], extra)
        results.append(mask_document(classes, rule, generator(key, "datasifter.mask", doc_id),
                                     None if forced is None else forced[i]))
    return results


def mask_metrics(masks: Sequence[MaskResult]) -> dict[str, float]:
    """Masked-fraction distribution and the count of documents that could not reach the target."""
    fractions = np.array([m.fraction for m in masks]) if masks else np.zeros(1)
    p10, p50, p90 = np.percentile(fractions, [10, 50, 90])
    return {
        "masked_fraction_mean": float(fractions.mean()), "masked_fraction_p10": float(p10),
        "masked_fraction_p50": float(p50), "masked_fraction_p90": float(p90),
        "docs_below_target": float(sum(not m.reached_target for m in masks)),
        "tokens_total": float(sum(len(m.masked) for m in masks)),
        "tokens_masked": float(sum(int(m.masked.sum()) for m in masks)),
    }


def apply_fills(
    texts: Sequence[str], tokens: Sequence[Sequence[Token]], masks: Sequence[MaskResult], fills: Sequence[list[str]]
) -> tuple[list[str], int]:
    """Texts with each masked word replaced by its fill; and how many fills differ from the original word."""
    out, changed = [], 0
    for text, doc_tokens, mask, doc_fills in zip(texts, tokens, masks, fills, strict=True):
        positions = np.flatnonzero(mask.masked).tolist()
        changed += sum(normal_form(doc_tokens[p].text) != normal_form(w) for p, w in zip(positions, doc_fills,
                                                                                            strict=True))
        out.append(replace_tokens(text, doc_tokens, dict(zip(positions, doc_fills, strict=True))))
    return out, changed


def sift(
    texts: Sequence[str], doc_ids: Sequence[str], setting: DataSifterSetting, fm: FillInModel,
    whitelist: Iterable[str], blacklist: Iterable[str], key: Key,
    sensitive_words: Sequence[Iterable[str]] | None = None, protected: Sequence[Sequence[Span]] | None = None,
) -> SiftResult:
    """Privatize ``texts`` with one DataSifterText setting.

    Args:
        texts: the documents.
        doc_ids: their ids (key every per-document generator).
        setting: probabilities, fill-in and obfuscation choices.
        fm: the loaded fill-in model.
        whitelist: sensitive words (masked more often).
        blacklist: protected words (never masked).
        key: the release key (the project's secret key derived for the setting; a public seed in tests).
        sensitive_words: per document, extra whitelist words (e.g. the words of its privacy spans).
        protected: per document, spans whose words are always masked (detected spans made
            consistent: ``mask_detected``); their words also join the document's whitelist.
    """
    started = time.perf_counter()
    tokens = [words(t) for t in texts]
    rule = MaskingRule.from_setting(setting, whitelist, blacklist)
    forced = None
    if protected is not None:
        regions = [consistent_spans(text, spans) for text, spans in zip(texts, protected, strict=True)]
        forced = [covered_tokens(doc, spans) for doc, spans in zip(tokens, regions, strict=True)]
        extra = [[t.text for t, hit in zip(doc, mask, strict=True) if hit] for doc, mask in zip(tokens, forced,
                                                                                                 strict=True)]
        sensitive_words = [[*(sensitive_words[i] if sensitive_words is not None else ()), *extra[i]]
                           for i in range(len(texts))]
    masks = mask_corpus(tokens, doc_ids, rule, key, sensitive_words, forced)
    masked_at = time.perf_counter()
    seeds = [torch_seed(key, "datasifter.fill", d) for d in doc_ids]
    fills = fill_documents(texts, tokens, [m.masked for m in masks], fm, FillOptions.from_setting(setting), seeds)
    filled, changed = apply_fills(texts, tokens, masks, fills)
    filled_at = time.perf_counter()
    result = obfuscate(filled, doc_ids, setting.replacement, setting.q, setting.k_clusters, setting.max_candidates,
                       setting.partner_pool_frac, key, stop_words())
    done = time.perf_counter()
    metrics = mask_metrics(masks)
    if forced is not None:
        metrics["protected_tokens"] = float(sum(int(f.sum()) for f in forced))
    n = max(1, len(texts))
    metrics.update({
        "filled_changed_fraction": changed / metrics["tokens_masked"] if metrics["tokens_masked"] else 0.0,
        "mask_seconds": masked_at - started, "fill_seconds": filled_at - masked_at,
        "obfuscate_seconds": done - filled_at,
        "docs_per_s": len(texts) / (filled_at - started) if filled_at > started else 0.0,
        "replaced_docs_fraction": float(result.replaced.sum()) / n,
        "docs_without_partner": float((result.partners == NO_PARTNER).sum()) if setting.replacement != "none" else 0.0,
    })
    log.info("datasifter: %d docs, %.1f%% of tokens masked (%d below target), %.1f docs/s mask+fill, "
             "%.1f%% replaced", len(texts), 100 * metrics["masked_fraction_mean"], metrics["docs_below_target"],
             metrics["docs_per_s"], 100 * metrics["replaced_docs_fraction"])
    return SiftResult(result.texts, metrics)
