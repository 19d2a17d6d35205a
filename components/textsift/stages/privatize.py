"""privatize@<setting>: apply one named privacy setting to the whole corpus.

The mechanism is chosen by the setting's ``kind`` (:data:`textsift.mechanisms.registry.MECHANISMS`); it implements
:class:`textsift.mechanisms.base.Mechanism`: given the documents and a ``Resources`` that loads what the setting
needs (models, indexes, detected spans) it returns the privatized texts and its own metrics.
This module does what every mechanism shares: the secret key (:mod:`textsift.secret_key`), the output
corpus (same ids, labels and splits, row order kept: L* = L), the privacy metrics computed identically
for every mechanism, the quality suite, and atomic writes.

Outputs: ``data/privatized/<setting>.parquet`` and ``metrics/privatize/<setting>.json``.
The privatized corpus stays a DVC output; only aggregates go to MLflow, and the setting itself, as a
registered pyfunc privatizer (:mod:`textsift.stages.privatize_model`).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from textsift import quality
from textsift.config import Setting
from textsift.corpus import atomic_path, corpus_table, read_corpus, spans_to_python, write_table
from textsift.errors import StageError
from textsift.evaluation.ledger import ledger_metrics, ledger_table
from textsift.evaluation.privacy import leak_rates, token_change_fraction
from textsift.mechanisms.base import Documents
from textsift.mechanisms.redact.vault import seal
from textsift.mechanisms.registry import mechanism
from textsift.releases import release_key
from textsift.rng import Key
from textsift.serving import servable
from textsift.stages import StageContext
from textsift.stages.privatize_attacks import outsider_metrics
from textsift.stages.privatize_model import ship_privatizer
from textsift.stages.resources import StageResources

log = logging.getLogger("textsift")
GUARANTEES = {"metric_dp": "metric-DP: epsilon per perturbed word, n*epsilon per document (METHODS.md section 2)"}


def documents(corpus: pd.DataFrame) -> Documents:
    """The corpus frame's texts, ids and gold spans, as every mechanism takes them."""
    return Documents(corpus["text"].tolist(), corpus["doc_id"].astype(str).tolist(),
                     [spans_to_python(cell) for cell in corpus["spans"]])


def privatize_corpus(corpus: pd.DataFrame, setting: Setting, resources: StageResources, key: Key
                     ) -> tuple[list[str], dict[str, float]]:
    """One setting's mechanism over a corpus frame (a chunk of ``textsift privatize``), with loaded resources."""
    return mechanism(setting.kind).privatize(documents(corpus), setting, resources, key)


def privacy_metrics(original: pd.DataFrame, texts: list[str]) -> dict[str, float]:
    """Token change fraction over all documents; leak rates over the test split's spans."""
    changed = [token_change_fraction(a, b) for a, b in zip(original["text"], texts, strict=True)]
    metrics = {"privacy.token_change_fraction": float(np.mean(changed)) if changed else 0.0}
    test = (original["split"] == "test").to_numpy()
    leaks = leak_rates(
        list(original["text"][test]),
        [spans_to_python(s) for s in original["spans"][test]],
        [t for t, is_test in zip(texts, test, strict=True) if is_test],
    )
    metrics.update({f"privacy.{k}": v for k, v in leaks.items()})
    return metrics


def run(ctx: StageContext) -> None:
    """Apply privacy setting ``ctx.instance.key`` of ``privatize.settings`` to the whole corpus with its mechanism.

    Reads ``corpus`` (and what the mechanism needs); writes ``privatized`` (ids, labels and splits kept, spans and
    interests emptied) and ``privatize_metrics``; logs the metrics, tags the run with mechanism and setting, and logs a
    line with the documents, seconds and share of tokens changed. Every draw is keyed by the setting's release key
    (the project's secret key derived for this setting: :mod:`textsift.releases`) and each document's id and text.
    """
    key = ctx.instance.key
    settings = ctx.params.privatize.settings
    if key not in settings:
        raise StageError(f"privatize: no setting {key!r} in privatize.settings ({', '.join(settings) or 'none'})")
    setting = settings[key]
    corpus = read_corpus(ctx.input("corpus"))
    quality.check_corpus(corpus, name="privatize_input").raise_if_failed()
    started, resources, docs, secret = time.perf_counter(), StageResources(ctx), documents(corpus), ctx.secret_key
    implementation = mechanism(setting.kind)
    drawn = release_key(secret, setting.kind, key, setting)  # this setting's own draws (textsift.releases)
    texts, mechanism_metrics = implementation.privatize(docs, setting, resources, drawn)
    seconds = time.perf_counter() - started
    output = corpus.assign(text=texts, spans=[[] for _ in texts], interest=None)  # the attacker's truth stays private
    report = quality.check_privatized(corpus, output, name="privatized_corpus")
    report.raise_if_failed()
    metrics = {f"{setting.kind}.{k}": v for k, v in mechanism_metrics.items()}
    metrics.update(privacy_metrics(corpus, texts))
    test = (corpus["split"] == "test").to_numpy()
    metrics.update(outsider_metrics(docs, texts, test, key, setting, resources, ctx.params.seed, secret))
    spent = getattr(implementation, "spent", None)  # a DP mechanism's per-document ε (the ledger)
    epsilon = spent(docs, setting, resources) if spent is not None else None
    metrics.update(ledger_metrics(epsilon))
    metrics.update({"privatize.docs_per_s": len(texts) / seconds if seconds else 0.0,
                    "privatize.seconds": seconds, **report.to_metrics()})
    write_table(corpus_table(output), ctx.output("privatized"))
    entries = implementation.vault_entries(docs, setting, resources, drawn) if getattr(setting, "vault", False) else {}
    with atomic_path(ctx.output("vault")) as tmp:
        tmp.write_bytes(seal(entries, key, secret))
    write_table(ledger_table(docs.ids, epsilon, GUARANTEES.get(setting.kind, "")), ctx.output("ledger"))
    ctx.write_metrics("privatize_metrics", metrics)
    ctx.log_metrics(metrics)
    ctx.tracker.set_tags(ctx.run_id, {"textsift.mechanism": setting.kind, "textsift.setting": key})
    if ctx.tracker.params.log_models and servable(implementation, setting):
        ship_privatizer(ctx, key, setting)
    log.info("privatize@%s: %d docs in %.1fs, %.1f%% tokens changed", key, len(texts), seconds,
             100 * metrics["privacy.token_change_fraction"])
