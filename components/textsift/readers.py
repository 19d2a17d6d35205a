"""Readers for CSV/TSV, JSONL, Parquet and CoNLL/BIO input (``.gz`` allowed).

Each reader yields ``RawRecord``s and never raises on a bad record: a record that cannot be
decoded or parsed is yielded with ``problem`` set, so ingest can reject it by id and keep its
original bytes. Files are decoded with ``surrogateescape`` so non-UTF-8 bytes survive
round trips and are detected per record rather than failing the whole file.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from textsift.config import SourceParams
from textsift.corpus import RawRecord, Span
from textsift.errors import InputError

_SURROGATE = re.compile("[\udc80-\udcff]")
FORMATS = ("csv", "tsv", "jsonl", "parquet", "conll")


def detect_format(path: Path) -> str:
    """The format named by a file's suffix (``.gz`` ignored)."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    ext = suffixes[-1].lstrip(".") if suffixes else ""
    aliases = {"json": "jsonl", "ndjson": "jsonl", "txt": "tsv", "pq": "parquet", "bio": "conll"}
    fmt = aliases.get(ext, ext)
    if fmt not in FORMATS:
        raise InputError(f"{path.name}: cannot tell the format from suffix {ext!r}; set ingest.source.format")
    return fmt


def _read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise InputError(f"input file not found: {path}")
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix.lower() == ".gz" else data


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN from pandas-like sources
        return None
    return value if isinstance(value, str) else str(value)


def _parse_spans(value: Any) -> tuple[Span, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = json.loads(value)
    spans = []
    for item in value:
        if isinstance(item, dict):
            spans.append(Span(int(item["start"]), int(item["end"]), str(item["label"])))
        else:
            start, end, label = item
            spans.append(Span(int(start), int(end), str(label)))
    return tuple(spans)


def _from_mapping(row: dict[str, Any], line: int, raw: bytes, src: SourceParams) -> RawRecord:
    """Build a record from a parsed row; problems become ``problem``, never exceptions."""
    doc_id = _as_text(row.get(src.id_field)) if src.id_field else f"row-{line}"
    if not doc_id:
        return RawRecord(f"row-{line}", None, None, line, raw, problem="missing_id")
    text = _as_text(row.get(src.text_field))
    label = _as_text(row.get(src.label_field)) if src.label_field else None
    split = _as_text(row.get(src.split_field)) if src.split_field else None
    if any(v is not None and _SURROGATE.search(v) for v in (doc_id, text, label)):
        return RawRecord(_SURROGATE.sub("?", doc_id), None, None, line, raw, problem="non_utf8")
    try:
        spans = _parse_spans(row.get(src.spans_field)) if src.spans_field else ()
    except (ValueError, KeyError, TypeError):
        return RawRecord(doc_id, text, label, line, raw, problem="bad_spans")
    return RawRecord(doc_id, text, label, line, raw, spans=spans, split=split)


def read_jsonl(path: Path, src: SourceParams) -> Iterator[RawRecord]:
    for line_no, raw in enumerate(_read_bytes(path).split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="non_utf8")
            continue
        except json.JSONDecodeError:
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="malformed")
            continue
        if not isinstance(row, dict):
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="malformed")
            continue
        yield _from_mapping(row, line_no, raw, src)


def read_delimited(path: Path, src: SourceParams, delimiter: str) -> Iterator[RawRecord]:
    """CSV (quoted, RFC 4180) or TSV (no quoting, split on newline and tab only)."""
    text = _read_bytes(path).decode("utf-8", errors="surrogateescape")
    if delimiter == "\t":
        rows = ([part.rstrip("\r") for part in line.split("\t")] for line in text.split("\n"))
    else:
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = list(src.columns) if src.columns else None
    for line_no, fields in enumerate(rows, start=1):
        if not any(f.strip() for f in fields):
            continue
        if header is None:
            header = fields
            continue
        raw = delimiter.join(fields).encode("utf-8", errors="surrogateescape")
        if len(fields) != len(header):
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="malformed")
            continue
        yield _from_mapping(dict(zip(header, fields, strict=True)), line_no, raw, src)


def read_parquet(path: Path, src: SourceParams) -> Iterator[RawRecord]:
    table = pq.read_table(path)
    for row_no, row in enumerate(table.to_pylist(), start=1):
        decoded: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, bytes):
                value = value.decode("utf-8", errors="surrogateescape")
            decoded[key] = value
        raw = json.dumps(decoded, default=str, ensure_ascii=False).encode("utf-8", errors="surrogateescape")
        yield _from_mapping(decoded, row_no, raw, src)


def _bio_spans(tokens: list[str], tags: list[str]) -> tuple[str, tuple[Span, ...]]:
    """Join tokens with single spaces and turn BIO tags into character spans."""
    offsets, pos = [], 0
    for token in tokens:
        offsets.append((pos, pos + len(token)))
        pos += len(token) + 1
    spans: list[Span] = []
    current: list[Any] | None = None
    for (start, end), tag in zip(offsets, tags, strict=True):
        kind, _, label = tag.partition("-")
        if kind == "I" and current is not None and current[2] == label:
            current[1] = end
            continue
        if current is not None:
            spans.append(Span(*current))
            current = None
        if kind in ("B", "I") and label:
            current = [start, end, label]
    if current is not None:
        spans.append(Span(*current))
    return " ".join(tokens), tuple(spans)


def read_conll(path: Path, src: SourceParams) -> Iterator[RawRecord]:
    """CoNLL/BIO: ``token<TAB>tag`` lines, sentences separated by lines empty after stripping."""
    lines = _read_bytes(path).split(b"\n")
    block: list[bytes] = []
    start_line = 1
    for line_no, raw_line in enumerate([*lines, b""], start=1):
        if raw_line.strip():
            if not block:
                start_line = line_no
            block.append(raw_line.rstrip(b"\r"))
            continue
        if block:
            yield _conll_record(block, start_line, src)
            block = []


def _conll_record(block: list[bytes], line: int, src: SourceParams) -> RawRecord:
    raw = b"\n".join(block)
    doc_id = f"sent-{line}"
    try:
        rows = [b.decode("utf-8").split() for b in block]
    except UnicodeDecodeError:
        return RawRecord(doc_id, None, None, line, raw, problem="non_utf8")
    if any(len(r) < 2 for r in rows):
        return RawRecord(doc_id, None, None, line, raw, problem="malformed")
    text, spans = _bio_spans([r[0] for r in rows], [r[-1] for r in rows])
    label = "entity" if spans else "none"
    return RawRecord(doc_id, text, label, line, raw, spans=spans)


def read_records(path: str | Path, src: SourceParams) -> Iterator[RawRecord]:
    """Dispatch on ``src.format`` (or the suffix when ``auto``)."""
    path = Path(path)
    fmt = detect_format(path) if src.format == "auto" else src.format
    if fmt == "jsonl":
        return read_jsonl(path, src)
    if fmt in ("csv", "tsv"):
        return read_delimited(path, src, "," if fmt == "csv" else "\t")
    if fmt == "parquet":
        return read_parquet(path, src)
    return read_conll(path, src)
