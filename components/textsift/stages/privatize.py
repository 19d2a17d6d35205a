"""privatize@<setting>: apply one named privacy setting to the whole corpus.

The mechanism is chosen by the setting's ``kind`` (:data:`textsift.mechanisms.registry.MECHANISMS`); it implements
:class:`textsift.mechanisms.base.Mechanism`: given the documents and a ``Resources`` that loads what the setting
needs (models, indexes, detected spans) it returns the privatized texts and its own metrics.
This module does what every mechanism shares: the secret key (:mod:`textsift.secret_key`), the output
corpus (same ids, labels and splits, row order kept: L* = L), the privacy metrics computed identically
for every mechanism, the quality suite, and atomic writes.

Outputs: ``data/privatized/<setting>.parquet`` with its manifest (:mod:`textsift.privatization.manifest`), the vault,
the ledger and ``metrics/privatize/<setting>.json``.
The privatized corpus stays a DVC output; only aggregates go to MLflow. The mechanism runs here once: what an
outsider recomputes from the release, and the setting shipped as a served privatizer, are the ``outsider`` stage's.
Spans come from the detect stage's file, never detected here, so no recognizer is among this stage's code deps. The
corpus-level helpers it shares with ``textsift privatize`` live in :mod:`textsift.privatization.corpus`.
"""

from __future__ import annotations

import logging
import time

import pandas as pd

from textsift.errors import StageError
from textsift.evaluation.ledger import ledger_metrics, ledger_table
from textsift.mechanisms.base import Mechanism, PrivatizeResult
from textsift.mechanisms.registry import mechanism
from textsift.privatization.corpus import documents, privacy_metrics
from textsift.privatization.manifest import release_manifest
from textsift.privatization.resources import StageResources
from textsift.quality.privatized import check_privatized
from textsift.quality.suites import check_corpus
from textsift.releases import release_key
from textsift.serving.service import serving_refusal
from textsift.stage_context import StageContext
from textsift.vault import seal

log = logging.getLogger("textsift")


def _write_release(ctx: StageContext, output: pd.DataFrame, result: PrivatizeResult, ids: list[str],
                   implementation: Mechanism) -> None:
    """The privatized corpus, its manifest (with why the setting is not served, if it is not), the sealed vault (empty
    unless the setting keeps one) and the ε ledger."""
    key = ctx.instance.key or ""
    setting = ctx.params.privatize.settings[key]
    refusal = serving_refusal(implementation, setting, ctx.params)
    ctx.save("privatized", output)
    ctx.save("release_manifest", release_manifest(key, setting, implementation, ctx.params, refusal,
                                                  ctx.secret_key.fingerprint))
    ctx.save("vault", seal(result.vault, key, ctx.secret_key))
    ctx.save("ledger", ledger_table(ids, result.spent, implementation.guarantee))


def run(ctx: StageContext) -> None:
    """Apply privacy setting ``ctx.instance.key`` of ``privatize.settings`` to the whole corpus with its mechanism.

    Reads ``corpus`` (and what the mechanism needs); runs the mechanism once, which gives the texts, its metrics, the
    ledger's ε and the vault's entries; writes ``privatized`` (ids, labels and splits kept, spans and interests
    emptied), its ``release_manifest``, ``vault``, ``ledger`` and ``privatize_metrics``; logs the metrics, tags the
    run with mechanism and setting, and logs a line with the documents, seconds and share of tokens changed. Every
    draw is keyed by the setting's release key (the project's secret key derived for this setting:
    :mod:`textsift.releases`) and each document's id and text.
    """
    key = ctx.instance.key
    settings = ctx.params.privatize.settings
    if key not in settings:
        raise StageError(f"privatize: no setting {key!r} in privatize.settings ({', '.join(settings) or 'none'})")
    setting, corpus = settings[key], ctx.load("corpus")
    check_corpus(corpus, name="privatize_input").raise_if_failed()
    started, docs, secret = time.perf_counter(), documents(corpus), ctx.secret_key
    resources = StageResources(ctx, detects_unseen=False)  # every document's spans from the detect stage's file
    implementation = mechanism(setting.kind)
    context = implementation.release_context(setting, resources)  # e.g. the index: a rebuilt one draws afresh
    drawn = release_key(secret, setting.kind, key, setting, context=context)  # its own draws (textsift.releases)
    result = implementation.privatize(docs, setting, resources, drawn, vault=getattr(setting, "vault", False))
    seconds = time.perf_counter() - started
    output = corpus.assign(text=result.texts, spans=[[] for _ in result.texts], interest=None)  # truth stays private
    report = check_privatized(corpus, output, name="privatized_corpus")
    report.raise_if_failed()
    own = {**result.metrics, **implementation.setting_metrics(setting, resources, drawn)}
    metrics = {**{f"{setting.kind}.{k}": v for k, v in own.items()},
               **privacy_metrics(corpus, result.texts), **ledger_metrics(result.spent),
               "privatize.docs_per_s": len(result.texts) / seconds if seconds else 0.0, "privatize.seconds": seconds,
               **report.to_metrics()}
    _write_release(ctx, output, result, docs.ids, implementation)
    ctx.save("privatize_metrics", metrics)
    ctx.log_metrics(metrics)
    ctx.tracker.set_tags(ctx.run_id, {"textsift.mechanism": setting.kind, "textsift.setting": key})
    log.info("privatize@%s: %d docs in %.1fs, %.1f%% tokens changed", key, len(result.texts), seconds,
             100 * metrics["privacy.token_change_fraction"])
