"""lrp_budgets: the fit behind every noisy-embedding setting — steps 1-3 of METHODS.md §3.

Step 1: each document's sensitive spans (``embedding_dp.spans``) whose label is in ``replace_labels``
become the neutral filler; the document is embedded (mean pooling, L2) — the *published basis*. The
original text is embedded too: the keyword attacker's clean view. Step 2: a seeded sample of the kept
sensitive words of the training split is masked, the fill-in LM proposes top-k fillers, and the spread of
their embeddings inside k-medoids clusters, aggregated over words, is Δf_d. Step 3: an MLP on the
training split's published-basis embeddings, LRP-ε relevance, and the regressor that predicts relevance
for the rows to publish.

Outputs: the fit (:mod:`textsift.budgets.fit_store`; local only, embeddings of raw text never go to MLflow);
aggregates go to ``metrics/lrp_budgets.json`` and MLflow.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.fit import classify, fit_relevance
from textsift.budgets.fit_store import budgets_file, embeddings_table, save_fit
from textsift.budgets.sensitive_words import random_words, sample_words, step_one
from textsift.budgets.sensitivity import aggregate_sensitivity
from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
from textsift.budgets.spreads import word_spreads
from textsift.corpus import Span, spans_to_python
from textsift.detection.spans_file import read_detected, stored_spans
from textsift.device import resolve_device
from textsift.embeddings.locate import model_folder
from textsift.errors import StageError
from textsift.evaluation.utility import score_probabilities
from textsift.models.fill_in import load_fill_in
from textsift.quality.embeddings import check_embeddings
from textsift.quality.suites import check_corpus, check_metrics
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


def sensitive_spans(ctx: StageContext, corpus: pd.DataFrame) -> list[list[Span]]:
    """The spans of ``embedding_dp.spans``: the detector's, the corpus's gold spans, or both."""
    gold = [spans_to_python(s) for s in corpus["spans"]]
    which = ctx.params.embedding_dp.spans
    if which == "gold":
        return gold
    detected = stored_spans(read_detected(ctx.input("detected")), corpus["doc_id"].tolist(), corpus["text"].tolist())
    return detected if which == "detected" else [g + d for g, d in zip(gold, detected, strict=True)]


def _step_two(ctx: StageContext, encoder: Any, corpus: pd.DataFrame, step1: list[tuple[str, Any]]
              ) -> tuple[np.ndarray, np.ndarray, int, int, float]:
    """Δf_d from the training split's kept sensitive words (topped up with random words): the word spreads, Δf_d,
    the sensitive and random word counts and the seconds it took."""
    params, seed = ctx.params.embedding_dp, ctx.params.seed
    train_idx = np.flatnonzero((corpus["split"] == "train").to_numpy())
    train_ids = corpus["doc_id"].to_numpy()[train_idx].tolist()
    train_texts = [step1[i][0] for i in train_idx]
    words = sample_words(train_ids, [step1[i][1] for i in train_idx], params.sensitivity.max_words, seed)
    n_sensitive = len(words)
    if n_sensitive < params.sensitivity.min_words:
        words += random_words(train_ids, train_texts, params.sensitivity.min_words - n_sensitive, seed, words)
        log.info("lrp_budgets: %d task-relevant sensitive words; %d random words top up step 2",
                 n_sensitive, len(words) - n_sensitive)
    fill_in = load_fill_in(ctx.model("fill_in"), resolve_device(ctx.params.device))
    started = time.perf_counter()
    spreads = word_spreads(encoder, fill_in, train_texts, words, params.sensitivity, seed, params.batch_size,
                           params.max_length)
    seconds = time.perf_counter() - started
    if spreads.shape[0] == 0:
        raise StageError("lrp_budgets: no sensitive word produced two fill-in candidates; Δf is undefined")
    delta = aggregate_sensitivity(spreads, params.sensitivity.agg, params.sensitivity.min_sensitivity)
    return spreads, delta, n_sensitive, len(words) - n_sensitive, seconds


def _step_three(ctx: StageContext, corpus: pd.DataFrame, basis: np.ndarray) -> tuple[Any, dict[str, float]]:
    """The relevance fit on the training split and the clean validation scores of a classifier on the basis."""
    params, seed = ctx.params.embedding_dp, ctx.params.seed
    train, validation = (corpus["split"] == "train").to_numpy(), (corpus["split"] == "validation").to_numpy()
    labels = np.asarray(corpus["label"].tolist(), dtype=object)
    fit = fit_relevance(basis[train], labels[train].tolist(), params.relevance, seed)
    if not validation.any():
        return fit, {}
    classes, proba = classify(basis[train], labels[train].tolist(), basis[validation], params.relevance, seed, "clean")
    return fit, score_probabilities(classes, proba, labels[validation].tolist())


def _sensitivity_metrics(spreads: np.ndarray, delta: np.ndarray, n_sensitive: int, n_random: int
                         ) -> dict[str, float]:
    return {"sensitivity.words": float(spreads.shape[0]), "sensitivity.sensitive_words": float(n_sensitive),
            "sensitivity.random_words": float(n_random), "sensitivity.mean": float(delta.mean()),
            "sensitivity.max": float(delta.max()), "sensitivity.min": float(delta.min())}


def _relevance_metrics(published: np.ndarray, fit: Any) -> dict[str, float]:
    return {"relevance.top10_share": float(np.sort(published)[::-1][:10].sum() / max(published.sum(), 1e-12)),
            "relevance.regressor_corr": float(np.corrcoef(published, fit.train_relevance)[0, 1])}


def run(ctx: StageContext) -> None:
    """Fit what every noisy-embedding setting shares: steps 1-3 of METHODS.md §3.

    Reads ``corpus``, the sensitive spans (``detected`` unless ``embedding_dp.spans`` is gold) and ``fill_in``; writes
    ``budgets`` (published-basis and clean embeddings, Δf_d, relevance) and ``lrp_budgets_metrics``; logs the metrics
    and ``budgets.npz`` to MLflow (never the embeddings) and a line with the documents, Δf and clean validation scores.
    """
    params = ctx.params.embedding_dp
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="lrp_budgets_input").raise_if_failed()
    spans = sensitive_spans(ctx, corpus)
    step1 = [step_one(t, s, params.replace_labels, params.filler) for t, s in zip(corpus["text"], spans, strict=True)]
    encoder = load_sentence_encoder(model_folder(params.encoder, ctx.root, ctx.tracker, "embedding_dp.encoder"),
                                    resolve_device(ctx.params.device))
    started = time.perf_counter()
    basis = encode(encoder, [text for text, _ in step1], params.batch_size, params.max_length)
    clean = encode(encoder, corpus["text"].tolist(), params.batch_size, params.max_length)
    encode_seconds = time.perf_counter() - started
    spreads, delta, n_sensitive, n_random, sensitivity_seconds = _step_two(ctx, encoder, corpus, step1)
    fit, clean_scores = _step_three(ctx, corpus, basis)
    published = fit.published_relevance(basis)
    table = embeddings_table(corpus, basis, clean, spans)
    frame = table.select(["doc_id", "split", "label", "embedding", "clean"]).to_pandas()
    for column in ("embedding", "clean"):
        check_embeddings(corpus, frame, encoder.dim, column=column,
                                 name=f"lrp_budgets_{column}").raise_if_failed()
    save_fit(ctx.output("budgets"), table, delta, fit.train_relevance, published)
    metrics = {"documents": float(len(corpus)), "dim": float(encoder.dim),
               **_sensitivity_metrics(spreads, delta, n_sensitive, n_random), **_relevance_metrics(published, fit),
               **{f"clean.validation.{k}": v for k, v in clean_scores.items() if not np.isnan(v)},
               "encode.docs_per_s": 2 * len(corpus) / max(encode_seconds, 1e-9),
               "sensitivity.seconds": sensitivity_seconds}
    report = check_metrics(metrics, name="lrp_budgets_metrics", unit_interval=("accuracy", "f1", "auc"))
    report.raise_if_failed()
    ctx.save("lrp_budgets_metrics", metrics)
    ctx.log_metrics({**metrics, **report.to_metrics()})
    ctx.tracker.log_artifact(ctx.run_id, budgets_file(ctx.output("budgets")), "lrp_budgets")
    log.info("lrp_budgets: %d docs embedded (dim %d), Δf from %d words (mean %.4f), clean validation %s",
             len(corpus), encoder.dim, spreads.shape[0], delta.mean(), clean_scores)
