"""Privatize a file of any size with bounded memory: two streaming passes, chunks, one atomic rename.

``textsift privatize`` (:mod:`textsift.adhoc`) reads its input twice, never whole:

1. **plan** — every record is read and validated as a stream (:class:`textsift.validation.Validator`); only the
   accepted records' ids, labels and given splits are kept, to draw the same stratified splits ingest draws
   (:func:`textsift.split.assign_splits`) and to count rejects before any work;
2. **privatize** — the file is read again, records validated again (the same decisions: validation depends on
   input order only), and every ``chunk_docs`` accepted records are privatized and appended to a temporary file
   that replaces the output only when the last chunk is written.

A per-document mechanism (``per_document``) keys every draw by (secret key, stage, document id), so chunking
changes no output byte (a Parquet file's row groups aside); DataSifterText calibrates over the whole corpus
(METHODS.md §1), so its file is one chunk. Memory holds one chunk and the per-record bookkeeping (ids, digests,
one split code per record): a few hundred bytes per record, not the file.
"""

from __future__ import annotations

import gzip
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from textsift.config import IngestParams, SourceParams
from textsift.corpus import Rejects
from textsift.errors import InputError
from textsift.readers import read_records
from textsift.split import SPLITS, assign_splits
from textsift.stages.ingest import corpus_frame, count_metrics
from textsift.validation import Validator

log = logging.getLogger("textsift")
CHUNK_DOCS = 10_000


@dataclass
class Plan:
    """What the first pass learned: the rejects, how many records were read, each accepted record's split and the
    counts ingest reports (spans, distinct labels, known interests)."""

    rejects: Rejects
    total: int
    split_codes: np.ndarray  # index into SPLITS, one per accepted record in input order
    spans: int = 0
    labels: int = 0
    interests: int = 0

    @property
    def accepted(self) -> int:
        """How many records pass validation (the output's rows)."""
        return len(self.split_codes)

    def metrics(self) -> dict[str, float]:
        """Ingest's count metrics of the file (:func:`textsift.stages.ingest.count_metrics`)."""
        splits = dict(zip(SPLITS, np.bincount(self.split_codes, minlength=len(SPLITS)).tolist(), strict=True))
        return count_metrics(self.total, self.rejects.counts(), self.accepted, self.spans, self.labels,
                             self.interests, splits)


def plan(path: Path, source: SourceParams, ingest: IngestParams, seed: int, require_label: bool) -> Plan:
    """First pass: validate the file as a stream and draw the splits of its accepted records."""
    validator = Validator(ingest, require_label)
    ids, labels, given, spans, interests = [], [], [], 0, 0
    for record in validator.stream(read_records(path, source)):
        ids.append(record.doc_id)
        labels.append(record.label)
        given.append(record.given_split)
        spans += len(record.spans)
        interests += record.interest is not None
    splits = assign_splits(ids, labels, ingest.split, seed, given if source.split_field else None)
    codes = np.fromiter((SPLITS.index(s) for s in splits), dtype=np.int8, count=len(splits))
    return Plan(validator.rejects, validator.total, codes, spans, len(set(labels)), interests)


def chunks(path: Path, source: SourceParams, ingest: IngestParams, require_label: bool, split_codes: np.ndarray,
           chunk_docs: int) -> Iterator[pd.DataFrame]:
    """Second pass: the accepted records in corpus frames of at most ``chunk_docs`` rows, splits from the plan."""
    validator, batch, done = Validator(ingest, require_label), [], 0
    for record in validator.stream(read_records(path, source)):
        if done + len(batch) == len(split_codes):
            raise InputError(f"{path.name} changed while it was read: more records than its first pass accepted")
        batch.append(record)
        if len(batch) == chunk_docs:
            yield corpus_frame(batch, [SPLITS[c] for c in split_codes[done:done + len(batch)]])
            done, batch = done + len(batch), []
    if batch:
        yield corpus_frame(batch, [SPLITS[c] for c in split_codes[done:done + len(batch)]])
        done += len(batch)
    if done != len(split_codes):
        raise InputError(f"{path.name} changed while it was read: {done} records accepted, {len(split_codes)} "
                         "in its first pass")


@dataclass
class ChunkWriter:
    """Appends frames to one file: Parquet row groups, or JSONL/CSV/TSV text (gzipped when asked).

    Frames appended one at a time give the bytes of the frames concatenated and written at once (Parquet: the same
    rows, in row groups)."""

    path: Path
    fmt: str
    gzipped: bool
    _stack: ExitStack = field(default_factory=ExitStack)
    _handle: IO[str] | None = None
    _parquet: pq.ParquetWriter | None = None

    def append(self, frame: pd.DataFrame) -> None:
        """Write ``frame``'s rows after those already written (a CSV/TSV header before the first)."""
        if self.fmt == "parquet":
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._parquet is None:
                self._parquet = self._stack.enter_context(pq.ParquetWriter(self.path, table.schema))
            self._parquet.write_table(table)
            return
        first = self._handle is None
        if first:
            opener: Callable[..., IO[str]] = gzip.open if self.gzipped else open  # type: ignore[assignment]
            self._handle = self._stack.enter_context(opener(self.path, "wt", encoding="utf-8", newline=""))
        if self.fmt == "jsonl":
            frame.to_json(self._handle, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_csv(self._handle, index=False, header=first, sep="," if self.fmt == "csv" else "\t")

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush and close the file."""
        self._stack.close()


class Progress:
    """Work done out of the total (documents, characters), as a bar on a terminal and a log line with rate and ETA
    at each step."""

    def __init__(self, total: int, what: str, unit: str = "documents") -> None:
        self.total, self.what, self.unit, self.done, self.started = total, what, unit, 0, time.perf_counter()
        self._bar = tqdm(total=total, unit=unit[:4], desc=what, disable=None, leave=False, unit_scale=True)

    def advance(self, n: int) -> None:
        """``n`` more units done."""
        self.done += n
        self._bar.update(n)
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed else 0.0
        left = (self.total - self.done) / rate if rate else 0.0
        log.info("%s: %d of %d %s (%.0f%%), %.0f/s, about %.0fs left", self.what, self.done, self.total, self.unit,
                 100 * self.done / max(self.total, 1), rate, left)

    def close(self) -> None:
        """Remove the bar."""
        self._bar.close()


def combine_metrics(parts: list[tuple[int, dict[str, float]]], additive: tuple[str, ...],
                    weight: str | None = None) -> dict[str, float]:
    """One set of metrics from per-chunk ones: totals (``additive``) summed, every other metric the mean of the
    chunks' values weighted by their documents, or by the chunk's metric ``weight`` (a per-token rate weighs by
    tokens, so it equals the whole file's); a constant stays itself."""
    weights = [float(m.get(weight, 0.0)) if weight else float(n) for n, m in parts]
    keys = dict.fromkeys(k for _, metrics in parts for k in metrics)
    return {k: float(sum(m.get(k, 0.0) for _, m in parts)) if k in additive
            else float(sum(w * m.get(k, 0.0) for w, (_, m) in zip(weights, parts, strict=True)) / max(sum(weights), 1))
            for k in keys}
