"""lrp_budgets: the fit behind every noisy-embedding setting — steps 1-3 of METHODS.md §3.

Step 1: each document's sensitive spans (``embedding_dp.spans``) whose label is in ``replace_labels``
become the neutral filler; the document is embedded (mean pooling, L2) — the *published basis*. The
original text is embedded too: the keyword attacker's clean view. Step 2: a seeded sample of the kept
sensitive words of the training split is masked, the fill-in LM proposes top-k fillers, and the spread of
their embeddings inside k-medoids clusters, aggregated over words, is Δf_d. Step 3: an MLP on the
training split's published-basis embeddings, LRP-ε relevance, and the regressor that predicts relevance
for the rows to publish.

Outputs (local only: embeddings of raw text never go to MLflow) ``data/lrp_budgets/embeddings.parquet``
(doc_id, split, label, embedding, clean, sensitive labels and words) and ``data/lrp_budgets/budgets.npz``
(Δf_d, relevance); aggregates go to ``metrics/lrp_budgets.json`` and MLflow.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import pyarrow as pa

from textsift import quality
from textsift.budgets.fit import classify, fit_relevance, word_spreads
from textsift.budgets.sensitive_words import random_words, sample_words, step_one
from textsift.budgets.sensitivity import aggregate_sensitivity
from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
from textsift.corpus import Span, atomic_dir, read_corpus, spans_to_python, write_table
from textsift.device import resolve_device
from textsift.embeddings.locate import model_folder
from textsift.errors import StageError
from textsift.evaluation.utility import score_probabilities
from textsift.models.fill_in import load_fill_in
from textsift.stages import StageContext
from textsift.stages.detected_spans import detected_spans

log = logging.getLogger("textsift")
EMBEDDINGS = "embeddings.parquet"
BUDGETS = "budgets.npz"
WORD_SEP = "\x1f"  # "<label>\x1f<casefolded word>" in the sensitive_words column


def sensitive_spans(ctx: StageContext, corpus: pd.DataFrame) -> list[list[Span]]:
    """The spans of ``embedding_dp.spans``: the detector's, the corpus's gold spans, or both."""
    gold = [spans_to_python(s) for s in corpus["spans"]]
    which = ctx.params.embedding_dp.spans
    if which == "gold":
        return gold
    detected = detected_spans(ctx, corpus)
    return detected if which == "detected" else [g + d for g, d in zip(gold, detected, strict=True)]


def _vectors(matrix: np.ndarray) -> pa.Array:
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1])


def vectors_table(rows: pd.DataFrame, vectors: dict[str, np.ndarray]) -> pa.Table:
    """``doc_id, split, label`` of ``rows`` and one fixed-size float32 list column per matrix in ``vectors``."""
    columns = {name: pa.array(rows[name].tolist(), pa.string()) for name in ("doc_id", "split", "label")}
    return pa.table({**columns, **{name: _vectors(matrix) for name, matrix in vectors.items()}})


def embeddings_table(corpus: pd.DataFrame, basis: np.ndarray, clean: np.ndarray, spans: list[list[Span]]) -> pa.Table:
    """The fit's rows: published-basis and clean embeddings, and the sensitive labels and words per document."""
    texts = corpus["text"].tolist()
    table = vectors_table(corpus, {"embedding": basis, "clean": clean})
    table = table.append_column("sensitive_labels", pa.array(
        [sorted({s.label for s in doc}) for doc in spans], pa.list_(pa.string())))
    return table.append_column("sensitive_words", pa.array(
        [sorted({f"{s.label}{WORD_SEP}{text[s.start:s.end].casefold()}" for s in doc})
         for text, doc in zip(texts, spans, strict=True)], pa.list_(pa.string())))


def run(ctx: StageContext) -> None:
    """Fit what every noisy-embedding setting shares: steps 1-3 of METHODS.md §3.

    Reads ``corpus``, the sensitive spans (``detected`` unless ``embedding_dp.spans`` is gold) and ``fill_in``; writes
    ``budgets`` (published-basis and clean embeddings, Δf_d, relevance) and ``lrp_budgets_metrics``; logs the metrics
    and ``budgets.npz`` to MLflow (never the embeddings) and a line with the documents, Δf and clean validation scores.
    """
    params, seed = ctx.params.embedding_dp, ctx.params.seed
    corpus = read_corpus(ctx.input("corpus"))
    quality.check_corpus(corpus, name="lrp_budgets_input").raise_if_failed()
    spans = sensitive_spans(ctx, corpus)
    step1 = [step_one(t, s, params.replace_labels, params.filler)
             for t, s in zip(corpus["text"], spans, strict=True)]
    filled = [text for text, _ in step1]
    device = resolve_device(ctx.params.device)
    encoder = load_sentence_encoder(model_folder(params.encoder, ctx.root, ctx.tracker, "embedding_dp.encoder"),
                                    device)
    started = time.perf_counter()
    basis = encode(encoder, filled, params.batch_size, params.max_length)
    clean = encode(encoder, corpus["text"].tolist(), params.batch_size, params.max_length)
    encode_seconds = time.perf_counter() - started

    train = (corpus["split"] == "train").to_numpy()
    train_idx = np.flatnonzero(train)
    train_ids = corpus["doc_id"].to_numpy()[train_idx].tolist()
    train_texts = [filled[i] for i in train_idx]
    words = sample_words(train_ids, [step1[i][1] for i in train_idx], params.sensitivity.max_words, seed)
    n_sensitive = len(words)
    if n_sensitive < params.sensitivity.min_words:
        words += random_words(train_ids, train_texts, params.sensitivity.min_words - n_sensitive, seed, words)
        log.info("lrp_budgets: %d task-relevant sensitive words; %d random words top up step 2",
                 n_sensitive, len(words) - n_sensitive)
    fill_in = load_fill_in(ctx.model("fill_in"), device)
    started = time.perf_counter()
    spreads = word_spreads(encoder, fill_in, train_texts, words, params.sensitivity, seed, params.batch_size,
                           params.max_length)
    sensitivity_seconds = time.perf_counter() - started
    if spreads.shape[0] == 0:
        raise StageError("lrp_budgets: no sensitive word produced two fill-in candidates; Δf is undefined")
    delta = aggregate_sensitivity(spreads, params.sensitivity.agg, params.sensitivity.min_sensitivity)

    labels = corpus["label"].tolist()
    train_labels = [labels[i] for i in train_idx]
    fit = fit_relevance(basis[train], train_labels, params.relevance, seed)
    published = fit.published_relevance(basis)
    validation = (corpus["split"] == "validation").to_numpy()
    clean_scores = {}
    if validation.any():
        classes, proba = classify(basis[train], train_labels, basis[validation], params.relevance, seed, "clean")
        clean_scores = score_probabilities(classes, proba, [labels[i] for i in np.flatnonzero(validation)])

    table = embeddings_table(corpus, basis, clean, spans)
    frame = table.select(["doc_id", "split", "label", "embedding", "clean"]).to_pandas()
    for column in ("embedding", "clean"):
        quality.check_embeddings(corpus, frame, encoder.dim, column=column,
                                 name=f"lrp_budgets_{column}").raise_if_failed()
    with atomic_dir(ctx.output("budgets")) as tmp:
        write_table(table, tmp / EMBEDDINGS)
        np.savez(tmp / BUDGETS, sensitivity=delta, train_relevance=fit.train_relevance, relevance=published)
    metrics = {
        "documents": float(len(corpus)), "dim": float(encoder.dim),
        "sensitivity.words": float(spreads.shape[0]), "sensitivity.sensitive_words": float(n_sensitive),
        "sensitivity.random_words": float(len(words) - n_sensitive),
        "sensitivity.mean": float(delta.mean()), "sensitivity.max": float(delta.max()),
        "sensitivity.min": float(delta.min()),
        "relevance.top10_share": float(np.sort(published)[::-1][:10].sum() / max(published.sum(), 1e-12)),
        "relevance.regressor_corr": float(np.corrcoef(published, fit.train_relevance)[0, 1]),
        **{f"clean.validation.{k}": v for k, v in clean_scores.items() if not np.isnan(v)},
        "encode.docs_per_s": 2 * len(corpus) / max(encode_seconds, 1e-9),
        "sensitivity.seconds": sensitivity_seconds,
    }
    report = quality.check_metrics(metrics, name="lrp_budgets_metrics", unit_interval=("accuracy", "f1", "auc"))
    report.raise_if_failed()
    ctx.write_metrics("lrp_budgets_metrics", metrics)
    ctx.log_metrics({**metrics, **report.to_metrics()})
    ctx.tracker.log_artifact(ctx.run_id, ctx.output("budgets") / BUDGETS, "lrp_budgets")
    log.info("lrp_budgets: %d docs embedded (dim %d), Δf from %d words (mean %.4f), clean validation %s",
             len(corpus), encoder.dim, spreads.shape[0], delta.mean(), clean_scores)
