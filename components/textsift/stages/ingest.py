"""ingest: read the corpus (or generate the demo corpus), validate, de-duplicate, split.

The corpus keeps each record's text and gold spans as given (``ingest.normalize.output`` normalizes them
too): models read a normalized view of it (:mod:`textsift.normalize`).

Outputs: ``data/ingest/corpus.parquet`` (canonical corpus), ``data/ingest/rejects.parquet``
(every rejected record with its id, reason and original bytes — nothing is lost) and
``metrics/ingest.json`` (counts only). The rejects file is written before the reject-fraction
check, so a failing run still shows what was wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from textsift.catalog import path as catalog_path
from textsift.config import Params
from textsift.corpus import RawRecord
from textsift.corpus_building import build_corpus, ingest_metrics
from textsift.demo import generate_demo
from textsift.quality.suites import check_corpus
from textsift.readers import read_records
from textsift.stage_context import StageContext
from textsift.validation import check_reject_fraction, validate_records

log = logging.getLogger("textsift")


def source_records(params: Params, ctx: StageContext) -> Iterable[RawRecord]:
    """The raw records of ``ingest.source``: the seeded demo corpus, or those read from its file."""
    source = params.ingest.source
    if source.kind == "demo":
        return generate_demo(params.ingest.demo, params.seed)
    return read_records(ctx.path(source.path or ""), source)


def run(ctx: StageContext) -> None:
    """Read ``ingest.source``, validate, de-duplicate and split it, and check the corpus's quality.

    Writes ``rejects`` (before the reject-fraction check, so a failing run still shows them), ``corpus`` and
    ``ingest_metrics``; logs the metrics (with the quality checks') and a line with the accepted and rejected counts.
    """
    params = ctx.params
    clean, rejects, total = validate_records(source_records(params, ctx), params.ingest)
    ctx.save("rejects", rejects.to_table())
    counts = rejects.counts()
    check_reject_fraction(rejects, total, params.ingest.max_reject_fraction, catalog_path("rejects"))
    frame = build_corpus(clean, params.ingest, params.seed)
    split = params.ingest.split
    report = check_corpus(
        frame,
        split_fractions={"train": 1 - split.validation - split.test, "validation": split.validation,
                         "test": split.test},
        tolerance=params.quality.split_tolerance,
        name="ingest_corpus",
    )
    report.raise_if_failed()
    ctx.save("corpus", frame)
    metrics = ingest_metrics(frame, total, counts)
    metrics.update(report.to_metrics())
    ctx.save("ingest_metrics", metrics)
    ctx.log_metrics(metrics)
    log.info("ingest: %d accepted, %d rejected %s", len(frame), sum(counts.values()), counts)
