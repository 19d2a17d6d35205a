"""Corpus types, the canonical Parquet schema, and atomic writers.

The canonical corpus every stage reads and writes is one Parquet file with the columns
``doc_id, text, label, split, spans, interest`` (spans: list of ``{start, end, label}`` character
offsets into ``text``; interest: the document's known interest category, ``none``, or null when
unknown — the ground truth of the interest attacker, never published with a privatized corpus).
Writers go through a temporary file in the same folder and an ``os.replace``, so a crash never
leaves a half-written artifact that a later stage trusts.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from textsift.errors import StorageError, TextsiftError

SPLITS = ("train", "validation", "test")

SPAN_TYPE = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("label", pa.string())])
CORPUS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),
        ("split", pa.string()),
        ("spans", pa.list_(SPAN_TYPE)),
        ("interest", pa.string()),
    ]
)
REQUIRED_COLUMNS = ("doc_id", "text", "label", "split", "spans")  # ``interest`` is null when absent
REJECTS_SCHEMA = pa.schema(
    [("doc_id", pa.string()), ("reason", pa.string()), ("source_line", pa.int64()), ("raw", pa.binary())]
)


@dataclass(frozen=True)
class Span:
    """A privacy span: characters ``text[start:end]`` are personal data of type ``label``."""

    start: int
    end: int
    label: str


class CharSpan(Protocol):
    """A private span of a text: characters ``[start, end)`` (``corpus.Span``, a detector's output)."""

    @property
    def start(self) -> int:
        """Offset of the span's first character."""
        ...

    @property
    def end(self) -> int:
        """Offset just past the span's last character (exclusive)."""
        ...


@dataclass(frozen=True)
class RawRecord:
    """One record as a reader saw it, before validation.

    ``raw`` keeps the record's original bytes so a rejected record is never lost;
    ``problem`` is set by the reader when the record could not even be parsed.
    """

    doc_id: str
    text: str | None
    label: str | None
    source_line: int
    raw: bytes
    spans: tuple[Span, ...] = ()
    split: str | None = None
    problem: str | None = None
    lines: int = 1  # physical lines the record covers: an unclosed quote swallows every line after it
    interest: str | None = None


@dataclass
class Rejects:
    """Rejected records with their reasons (kept, never dropped silently)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    swallowed: int = 0  # lines beyond the first of rejects that cover several (records they may have held)

    def add(self, record: RawRecord, reason: str) -> None:
        """Keep ``record`` as a reject: its id, ``reason``, source line and original bytes; a reject covering
        several lines (an unclosed quote) counts its other lines as swallowed records."""
        self.rows.append(
            {"doc_id": record.doc_id, "reason": reason, "source_line": record.source_line, "raw": record.raw}
        )
        self.swallowed += max(record.lines - 1, 0)

    def counts(self) -> dict[str, int]:
        """How many records were rejected for each reason, sorted by reason (for the ingest metrics)."""
        out: dict[str, int] = {}
        for row in self.rows:
            out[row["reason"]] = out.get(row["reason"], 0) + 1
        return dict(sorted(out.items()))

    def to_table(self) -> pa.Table:
        """The rejects as an Arrow table of ``REJECTS_SCHEMA`` (the rejects Parquet file)."""
        return pa.Table.from_pylist(self.rows, schema=REJECTS_SCHEMA)


def spans_to_python(spans: Any) -> list[Span]:
    """Spans from a Parquet/pandas cell (list of dicts or None) as Span objects."""
    if spans is None:
        return []
    return [Span(int(s["start"]), int(s["end"]), str(s["label"])) for s in spans]


def split_rows(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of a corpus frame in split ``name`` (train, validation or test)."""
    return frame[frame["split"] == name]


def corpus_table(frame: pd.DataFrame) -> pa.Table:
    """A canonical corpus frame as an Arrow table with the exact schema (a missing ``interest`` column: null)."""
    if "interest" not in frame.columns:
        frame = frame.assign(interest=None)
    return pa.Table.from_pandas(frame[CORPUS_SCHEMA.names], schema=CORPUS_SCHEMA, preserve_index=False)


def _process_umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
        return int(next(line for line in status.splitlines() if line.startswith("Umask:")).split()[1], 8)
    except (OSError, StopIteration, ValueError):
        mask = os.umask(0o022)
        os.umask(mask)
        return mask


def _as_if_created(path: Path, is_dir: bool) -> None:
    """Give a temporary file or folder the permissions a plain ``open``/``mkdir`` would have.

    ``mkstemp`` and ``mkdtemp`` create 0600/0700 entries; renamed into place they would make
    outputs unreadable by the group that shares the project (0644/0755 under umask 022).
    """
    os.chmod(path, (0o777 if is_dir else 0o666) & ~_process_umask())


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` or an exception it was raised from is a full disk or quota (an OSError's ENOSPC/EDQUOT,
    sqlite's "database or disk is full" under MLflow's and SQLAlchemy's wrappers)."""
    seen: BaseException | None = err
    for _ in range(20):  # a chain, never a cycle
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in DISK_FULL:
            return True
        if "No space left on device" in str(seen) or "database or disk is full" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextmanager
def disk_full_named(folder: Path, doing: str) -> Iterator[None]:
    """A full disk while ``doing`` (writing one output, or anything a stage does: MLflow's store and artifacts)
    becomes one line naming ``folder`` and the fix instead of a writer's traceback, never retried as if transient."""
    try:
        yield
    except TextsiftError:
        raise
    except Exception as err:
        if is_disk_full(err):
            raise StorageError(f"no space left on the disk holding {folder} while {doing}: free space there and run "
                               "again (what was written is whole; the rerun redoes only what is missing)") from None
        raise


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target`` atomically."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        with disk_full_named(target, "writing it"):
            yield tmp_path
            _as_if_created(tmp_path, is_dir=False)
            os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_dir(target: str | Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; on success it takes ``target``'s place."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with disk_full_named(target, "writing it"):
            yield tmp
            _as_if_created(tmp, is_dir=True)
            if target.exists():
                old = target.with_name(f".{target.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(target, old)
                os.replace(tmp, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def remove_stale_temporaries(target: str | Path, before: float | None = None) -> list[Path]:
    """Remove what a killed writer of ``target`` left beside it (:func:`atomic_path`'s ``.<name>.*.tmp`` files,
    :func:`atomic_dir`'s ``.<name>.*`` folders); the removed paths.

    Without ``before``, only safe while no one else writes ``target``: a stage instance calls it for its own outputs,
    under the project's run lock. A writer without that lock (``textsift privatize``) passes the time it began:
    then only :func:`atomic_path`'s own temporaries of ``target`` (``.<name>.XXXXXXXX.tmp``, not another file's such
    as ``<name>.rejects.parquet``) last modified before it go, since a run that began later may be writing its own.
    """
    target = Path(target)
    if not target.parent.is_dir():
        return []
    stale = [p for p in target.parent.glob(f".{target.name}.*") if p.name.endswith((".tmp", ".old")) or p.is_dir()]
    if before is not None:
        own = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")  # mkstemp's 8 characters
        stale = [p for p in stale if own.fullmatch(p.name) and p.is_file() and p.stat().st_mtime < before]
    for path in stale:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return stale


def write_table(table: pa.Table, target: str | Path) -> None:
    """Write a Parquet file atomically, byte-for-byte reproducible for the same table."""
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False)


def write_json(data: Any, target: str | Path) -> None:
    """Write JSON atomically with sorted keys (stable bytes for DVC)."""
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_corpus(path: str | Path) -> pd.DataFrame:
    """Read a canonical corpus Parquet file into a frame."""
    return pq.read_table(path, schema=CORPUS_SCHEMA).to_pandas()
