"""Privatize a file of any size with bounded memory: two streaming passes, chunks, one atomic rename.

``textsift privatize`` (:mod:`textsift.adhoc`) reads its input twice, never whole:

1. **plan** — every record is read and validated as a stream (:class:`textsift.validation.Validator`); only the
   accepted records' ids, labels and given splits are kept, to draw the same stratified splits ingest draws
   (:func:`textsift.split.assign_splits`) and to count rejects before any work;
2. **privatize** — the file is read again, records validated again (the same decisions: validation depends on
   input order only), and every ``chunk_docs`` accepted records are privatized and appended to a temporary file
   that replaces the output only when the last chunk is written.

Between the passes the file must stay the same file: its size and modification time are checked before pass 2 and a
digest of the accepted records' ids and texts after it (before the output replaces anything), so a file replaced by
another with as many records fails in one line. A rerun removes the temporary files an earlier killed run of the same
output left (``.<output>.*.tmp`` older than the run), and SIGTERM during pass 2 is a clean exit that removes this
run's own (:func:`textsift.shutdown.sigterm_exits`). :class:`Progress` logs counts at least every
``HEARTBEAT_SECONDS``, also while one long chunk (or one huge record) is being privatized.

A per-document mechanism (``per_document``) keys every draw by (secret key, stage, document id), so chunking
changes no output byte (a Parquet file's row groups aside); DataSifterText calibrates over the whole corpus
(METHODS.md §1), so its file is one chunk. Memory holds one chunk and the per-record bookkeeping (ids, digests,
one split code per record): a few hundred bytes per record, not the file.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from textsift.corpus import Rejects, atomic_path, remove_stale_temporaries
from textsift.corpus_building import corpus_frame, count_metrics
from textsift.errors import InputError
from textsift.ingest_params import IngestParams, SourceParams
from textsift.readers import read_records
from textsift.shutdown import sigterm_exits
from textsift.split import SPLITS, assign_splits
from textsift.validation import CleanRecord, Validator

log = logging.getLogger("textsift")
CHUNK_DOCS = 10_000
HEARTBEAT_SECONDS = 10.0  # the longest silence of a streamed run's log


@dataclass(frozen=True)
class Identity:
    """Which file a pass read: its size and modification time (from before the pass) and a digest of the ids and
    texts of its accepted records."""

    size: int
    mtime_ns: int
    digest: str


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError as err:
        raise InputError(f"{path.name}: cannot be read ({type(err).__name__})") from None
    return info.st_size, info.st_mtime_ns


class _Digest:
    """A running digest of accepted records (id and text, each length-prefixed): equal only for the same records."""

    def __init__(self) -> None:
        self._hash = hashlib.blake2b(digest_size=16)

    def passing(self, records: Iterable[CleanRecord]) -> Iterator[CleanRecord]:
        """``records``, each added to the digest as it passes."""
        for record in records:
            for part in (record.doc_id, record.text):
                data = part.encode("utf-8", "surrogatepass")
                self._hash.update(len(data).to_bytes(8, "little") + data)
            yield record

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


@dataclass
class Plan:
    """What the first pass learned: the rejects, how many records were read, each accepted record's split and the
    counts ingest reports (spans, distinct labels, known interests)."""

    rejects: Rejects
    total: int
    split_codes: np.ndarray  # index into SPLITS, one per accepted record in input order
    identity: Identity
    started: float  # wall-clock time the first pass began (temporary files older than it are stale)
    spans: int = 0
    labels: int = 0
    interests: int = 0

    @property
    def accepted(self) -> int:
        """How many records pass validation (the output's rows)."""
        return len(self.split_codes)

    def metrics(self) -> dict[str, float]:
        """Ingest's count metrics of the file (:func:`textsift.corpus_building.count_metrics`)."""
        splits = dict(zip(SPLITS, np.bincount(self.split_codes, minlength=len(SPLITS)).tolist(), strict=True))
        return count_metrics(self.total, self.rejects.counts(), self.accepted, self.spans, self.labels,
                             self.interests, splits)


def plan(path: Path, source: SourceParams, ingest: IngestParams, seed: int, require_label: bool) -> Plan:
    """First pass: validate the file as a stream, draw the splits of its accepted records, note the file's identity."""
    started, (size, mtime_ns) = time.time(), _stat(path)
    validator, digest = Validator(ingest, require_label), _Digest()
    ids, labels, given, spans, interests = [], [], [], 0, 0
    for record in digest.passing(validator.stream(read_records(path, source))):
        ids.append(record.doc_id)
        labels.append(record.label)
        given.append(record.given_split)
        spans += len(record.spans)
        interests += record.interest is not None
    splits = assign_splits(ids, labels, ingest.split, seed, given if source.split_field else None)
    codes = np.fromiter((SPLITS.index(s) for s in splits), dtype=np.int8, count=len(splits))
    return Plan(validator.rejects, validator.total, codes, Identity(size, mtime_ns, digest.hexdigest()), started, spans,
                len(set(labels)), interests)


def _changed(path: Path, what: str) -> InputError:
    return InputError(f"{path.name} changed between the two passes over it ({what}): privatize it again once "
                      "nothing writes it")


def chunks(path: Path, source: SourceParams, ingest: IngestParams, require_label: bool, planned: Plan,
           chunk_docs: int) -> Iterator[pd.DataFrame]:
    """Second pass: the accepted records in corpus frames of at most ``chunk_docs`` rows, splits from the plan; an
    InputError when the file is not the one the plan read (checked before the first record and after the last)."""
    if _stat(path) != (planned.identity.size, planned.identity.mtime_ns):
        raise _changed(path, "its size or modification time")
    split_codes, digest = planned.split_codes, _Digest()
    validator, batch, done = Validator(ingest, require_label), [], 0
    for record in digest.passing(validator.stream(read_records(path, source))):
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
    if digest.hexdigest() != planned.identity.digest:
        raise _changed(path, "the ids or texts of its records")


def clear_stale(target: Path, started: float) -> None:
    """Remove (and say so) the temporaries of ``target`` that runs stopped before ``started`` left beside it."""
    for stale in remove_stale_temporaries(target, before=started):
        log.info("removed %s, left by an earlier run that was stopped", stale.name)


@contextmanager
def output_file(target: Path, started: float) -> Iterator[Path]:
    """A temporary path that replaces ``target`` when the block succeeds (:func:`textsift.corpus.atomic_path`), once
    the stale temporaries of runs before ``started`` are gone; SIGTERM inside is a clean exit that removes it."""
    clear_stale(target, started)
    with sigterm_exits(), atomic_path(target) as tmp:
        yield tmp


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
    at each step, and at least every ``HEARTBEAT_SECONDS`` while a step takes longer (counts only, never text)."""

    def __init__(self, total: int, what: str, unit: str = "documents") -> None:
        self.total, self.what, self.unit, self.done, self.started = total, what, unit, 0, time.perf_counter()
        self._bar = tqdm(total=total, unit=unit[:4], desc=what, disable=None, leave=False, unit_scale=True)
        self._stop, self._stepped = threading.Event(), time.perf_counter()
        self._heartbeat = threading.Thread(target=self._beat, name=f"progress {what}", daemon=True)
        self._heartbeat.start()

    def advance(self, n: int) -> None:
        """``n`` more units done."""
        self.done += n
        self._stepped = time.perf_counter()
        self._bar.update(n)
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed else 0.0
        left = (self.total - self.done) / rate if rate else 0.0
        log.info("%s: %d of %d %s (%.0f%%), %.0f/s, about %.0fs left", self.what, self.done, self.total, self.unit,
                 100 * self.done / max(self.total, 1), rate, left)

    def _beat(self) -> None:
        """Log that work goes on whenever no step was logged for ``HEARTBEAT_SECONDS`` (one huge record, a slow
        chunk), until :meth:`close`."""
        while not self._stop.wait(HEARTBEAT_SECONDS / 4):
            silent = time.perf_counter() - self._stepped
            if silent >= HEARTBEAT_SECONDS:
                self._stepped = time.perf_counter()
                log.info("%s: still working: %d of %d %s done, %.0fs on the current step, %.0fs in all", self.what,
                         self.done, self.total, self.unit, silent, self._stepped - self.started)

    def close(self) -> None:
        """Stop the heartbeat and remove the bar."""
        self._stop.set()
        self._heartbeat.join()
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
