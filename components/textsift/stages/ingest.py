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
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from textsift import quality
from textsift.catalog import path as catalog_path
from textsift.config import IngestParams, Params
from textsift.corpus import RawRecord, corpus_table, write_table
from textsift.demo import generate_demo
from textsift.readers import read_records
from textsift.split import assign_splits
from textsift.stages import StageContext
from textsift.validation import REASONS, CleanRecord, check_reject_fraction, validate_records

log = logging.getLogger("textsift")


def source_records(params: Params, ctx: StageContext) -> Iterable[RawRecord]:
    """The raw records of ``ingest.source``: the seeded demo corpus, or those read from its file."""
    source = params.ingest.source
    if source.kind == "demo":
        return generate_demo(params.ingest.demo, params.seed)
    return read_records(ctx.path(source.path or ""), source)


def build_corpus(clean: list[CleanRecord], params: IngestParams, seed: int) -> pd.DataFrame:
    """The canonical corpus frame (input order kept) with seeded stratified splits."""
    given = [r.given_split for r in clean] if params.source.split_field else None
    return corpus_frame(clean, assign_splits([r.doc_id for r in clean], [r.label for r in clean], params.split,
                                             seed, given))


def corpus_frame(clean: Sequence[CleanRecord], splits: Sequence[str]) -> pd.DataFrame:
    """The corpus frame of validated records and their splits (a whole corpus, or one chunk of a streamed file)."""
    return pd.DataFrame(
        {
            "doc_id": [r.doc_id for r in clean],
            "text": [r.text for r in clean],
            "label": [r.label for r in clean],
            "split": list(splits),
            "spans": [[{"start": s.start, "end": s.end, "label": s.label} for s in r.spans] for r in clean],
            "interest": [r.interest for r in clean],
        }
    )


def ingest_metrics(frame: pd.DataFrame, total: int, reject_counts: dict[str, int]) -> dict[str, float]:
    """Counts of ingest: documents read, accepted and rejected (per reason), spans, labels, splits."""
    return count_metrics(total, reject_counts, len(frame), int(frame["spans"].map(len).sum()) if len(frame) else 0,
                         int(frame["label"].nunique()) if len(frame) else 0,
                         int(frame["interest"].notna().sum()) if len(frame) else 0, Counter(frame["split"]))


def count_metrics(total: int, reject_counts: dict[str, int], accepted: int, spans: int, labels: int, interests: int,
                  splits: Mapping[str, int]) -> dict[str, float]:
    """Ingest's count metrics from the counts themselves (ingest's frame, or a file streamed by textsift privatize)."""
    rejected = sum(reject_counts.values())
    metrics: dict[str, float] = {
        "docs.read": total,
        "docs.accepted": accepted,
        "docs.rejected": rejected,
        "docs.reject_fraction": rejected / total if total else 0.0,
        "spans.total": spans,
        "labels.distinct": labels,
        "interests.known": interests,
    }
    metrics.update({f"rejected.{reason}": reject_counts.get(reason, 0) for reason in REASONS})
    metrics.update({f"split.{split}": count for split, count in splits.items() if count})
    return metrics


def run(ctx: StageContext) -> None:
    """Read ``ingest.source``, validate, de-duplicate and split it, and check the corpus's quality.

    Writes ``rejects`` (before the reject-fraction check, so a failing run still shows them), ``corpus`` and
    ``ingest_metrics``; logs the metrics (with the quality checks') and a line with the accepted and rejected counts.
    """
    params = ctx.params
    clean, rejects, total = validate_records(source_records(params, ctx), params.ingest)
    write_table(rejects.to_table(), ctx.output("rejects"))
    counts = rejects.counts()
    check_reject_fraction(rejects, total, params.ingest.max_reject_fraction, catalog_path("rejects"))
    frame = build_corpus(clean, params.ingest, params.seed)
    split = params.ingest.split
    report = quality.check_corpus(
        frame,
        split_fractions={"train": 1 - split.validation - split.test, "validation": split.validation,
                         "test": split.test},
        tolerance=params.quality.split_tolerance,
        name="ingest_corpus",
    )
    report.raise_if_failed()
    write_table(corpus_table(frame), ctx.output("corpus"))
    metrics = ingest_metrics(frame, total, counts)
    metrics.update(report.to_metrics())
    ctx.write_metrics("ingest_metrics", metrics)
    ctx.log_metrics(metrics)
    log.info("ingest: %d accepted, %d rejected %s", len(frame), sum(counts.values()), counts)
