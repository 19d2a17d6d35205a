"""Building the corpus table from validated records: seeded stratified splits and ingest's count metrics.

Shared by the ``ingest`` stage (a whole corpus) and the streamed ``textsift privatize`` (:mod:`textsift.chunked`:
one chunk of a file at a time), so both give the same columns and the same counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pandas as pd

from textsift.ingest_params import IngestParams
from textsift.split import assign_splits
from textsift.validation import REASONS, CleanRecord


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
