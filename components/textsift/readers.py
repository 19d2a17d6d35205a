"""Readers for CSV/TSV, JSONL, Parquet and CoNLL/BIO input (``.gz`` allowed).

Each reader yields ``RawRecord``s and never raises on a bad record: a record that cannot be
decoded or parsed is yielded with ``problem`` set, so ingest can reject it by id and keep its
original bytes (a CoNLL sentence with a tag that is not ``O``, ``B-<label>`` or ``I-<label>`` is a ``bad_spans`` record,
its file and line logged). Files are decoded with ``surrogateescape`` so non-UTF-8 bytes survive
round trips and are detected per record rather than failing the whole file. Files are read as a
stream (line by line, Parquet in batches), so reading holds one record at a time whatever the file's
size (a gzipped Parquet file is the exception: Parquet needs to seek, so it is decompressed in memory). A field of the
wrong type (a number or list as text, a float label) is a ``bad_type`` problem, never
``str()``-ed into a document. Only a file that cannot be read at all (missing, a folder, corrupt gzip or
Parquet, a configured column that the file does not have) raises ``InputError``, in one line that names the file.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import logging
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from textsift.corpus import RawRecord, Span
from textsift.errors import InputError
from textsift.ingest_params import SourceParams

log = logging.getLogger("textsift")
_SURROGATE = re.compile("[\udc80-\udcff]")
FORMATS = ("csv", "tsv", "jsonl", "parquet", "conll")
PARQUET_BATCH_ROWS = 10_000
_FLAGS = ("text_field", "label_field", "id_field", "spans_field")  # the settings ad-hoc commands take as options


class _BadType(Exception):
    """A field holds a value of a type that is not text (raised and caught inside this module)."""


def detect_format(path: Path) -> str:
    """The format named by a file's suffix (``.gz`` ignored)."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    ext = suffixes[-1].lstrip(".") if suffixes else ""
    aliases = {"json": "jsonl", "ndjson": "jsonl", "txt": "tsv", "pq": "parquet", "bio": "conll"}
    fmt = aliases.get(ext, ext)
    if fmt not in FORMATS:
        raise InputError(f"{path.name}: cannot tell the format from suffix {ext!r}; "
                         "set ingest.source.format (or --format)")
    return fmt


def _fields(src: SourceParams) -> dict[str, str]:
    """The columns ``src`` reads, by setting name (``text_field`` ...): each must be in the file."""
    named = {"text_field": src.text_field, "id_field": src.id_field, "label_field": src.label_field,
             "spans_field": src.spans_field, "split_field": src.split_field, "interest_field": src.interest_field}
    return {setting: column for setting, column in named.items() if column is not None}


def _missing_column(path: Path, setting: str, column: str, where: str) -> InputError:
    """The error of a configured column the file lacks: the column, the file and the setting that names it (never the
    file's own column names: a header-less file's first line is a record)."""
    flag = f" (--{setting.replace('_', '-')})" if setting in _FLAGS else ""
    hint = "; or --label-field none for unlabelled input" if setting == "label_field" else ""
    return InputError(f"{path.name}: no column {column!r} {where}; set ingest.source.{setting}{flag} to one of its "
                      f"columns{hint}")


def _check_columns(path: Path, src: SourceParams, columns: Iterable[str], where: str) -> None:
    """InputError naming the first configured column that is not among ``columns``."""
    present = set(columns)
    for setting, column in _fields(src).items():
        if column not in present:
            raise _missing_column(path, setting, column, where)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped for ``.gz`` (gzipped Parquet only); a corrupt gzip is one InputError."""
    if not path.is_file():
        raise InputError(f"input file not found: {path}")
    data = path.read_bytes()
    if path.suffix.lower() != ".gz":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError, zlib.error) as err:
        raise InputError(f"{path.name}: truncated or corrupt gzip ({err})") from None


def _lines(path: Path) -> Iterator[bytes]:
    """The file's lines as bytes, without their ``\n`` (a ``\r`` stays), gunzipped for ``.gz``, streamed.

    A missing file, or a gzip found truncated or corrupt on the way, is one InputError."""
    if not path.is_file():
        raise InputError(f"input file not found: {path}")
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            for line in handle:
                yield line[:-1] if line.endswith(b"\n") else line
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise InputError(f"{path.name}: truncated or corrupt gzip ({err})") from None


def _as_text(value: Any, integers: bool = False) -> str | None:
    """A field as text, or ``_BadType`` rather than ``str()`` of a value that is not text.

    None and NaN are missing; strings are kept. Where ``integers`` (ids, labels) an integer
    becomes its decimal text (a boolean ``True``/``False``), a float only if integral (``1.0``
    -> ``"1"``: pandas stores an integer column with gaps as floats). Anything else — lists,
    dicts, other floats, numbers as document text — is a wrong type.
    """
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN from pandas-like sources
        return None
    if isinstance(value, str):
        return value
    if integers and isinstance(value, int):
        return str(value)
    if integers and isinstance(value, float) and value.is_integer():
        return str(int(value))
    raise _BadType


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
    """Build a record from a parsed row; problems become ``problem``, never exceptions.

    Ids and labels may be strings or integers; text and split must be strings.
    """
    try:
        doc_id = _as_text(row.get(src.id_field), integers=True) if src.id_field else f"row-{line}"
    except _BadType:
        return RawRecord(f"row-{line}", None, None, line, raw, problem="bad_type")
    if not doc_id:
        return RawRecord(f"row-{line}", None, None, line, raw, problem="missing_id")
    if _SURROGATE.search(doc_id):
        return RawRecord(_SURROGATE.sub("?", doc_id), None, None, line, raw, problem="non_utf8")
    try:
        text = _as_text(row.get(src.text_field))
        label = _as_text(row.get(src.label_field), integers=True) if src.label_field else None
        split = _as_text(row.get(src.split_field)) if src.split_field else None
        interest = _as_text(row.get(src.interest_field)) if src.interest_field else None
    except _BadType:
        return RawRecord(doc_id, None, None, line, raw, problem="bad_type")
    if any(v is not None and _SURROGATE.search(v) for v in (text, label, split, interest)):
        return RawRecord(doc_id, None, None, line, raw, problem="non_utf8")
    try:
        spans = _parse_spans(row.get(src.spans_field)) if src.spans_field else ()
    except (ValueError, KeyError, TypeError):
        return RawRecord(doc_id, text, label, line, raw, problem="bad_spans")
    return RawRecord(doc_id, text, label, line, raw, spans=spans, split=split, interest=interest)


def read_jsonl(path: Path, src: SourceParams) -> Iterator[RawRecord]:
    """One record per non-blank JSON-object line; undecodable or malformed lines become problem records.

    A configured column that no object of the file has is an InputError once the file is read (a JSONL file has no
    header: a single record may lack a field, the whole file may not)."""
    unseen, objects = _fields(src), 0
    for line_no, raw in enumerate(_lines(path), start=1):
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
        objects += 1
        unseen = {setting: column for setting, column in unseen.items() if column not in row}
        yield _from_mapping(row, line_no, raw, src)
    if objects and unseen:
        setting, column = next(iter(unseen.items()))
        raise _missing_column(path, setting, column, f"in any of its {objects} objects")


class _LineTap:
    """Lines of a text for ``csv.reader``, remembering those consumed since the last ``take``.

    The reader pulls exactly the lines of one record, so ``take`` gives a record's original
    text and its first line number; ``ended`` tells that the reader ran into the end of the
    file inside a record (an unclosed quote).
    """

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self._taken: list[str] = []
        self.consumed = 0
        self.ended = False

    def __iter__(self) -> _LineTap:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._lines)
        except StopIteration:
            self.ended = True
            raise
        self._taken.append(line)
        self.consumed += 1
        return line

    def take(self) -> tuple[int, str]:
        """(first line number, original text without its final line break) of the last record."""
        taken, self._taken = self._taken, []
        return self.consumed - len(taken) + 1, "".join(taken).removesuffix("\n").removesuffix("\r")


def _delimited_rows(path: Path, delimiter: str) -> Iterator[tuple[int, list[str], str, bool]]:
    """(first line, fields, original text, unclosed quote) per row; TSV rows are single lines."""
    decoded = (line.decode("utf-8", errors="surrogateescape") for line in _lines(path))
    if delimiter == "\t":
        for line_no, line in enumerate(decoded, start=1):
            line = line.rstrip("\r")
            yield line_no, line.split("\t"), line, False
        return
    # csv.reader wants the lines with their endings (a quoted field may hold a line break)
    tap = _LineTap(piece for line in decoded
                   for piece in (io.StringIO(line + "\n", newline="") if "\r" in line else (line + "\n",)))
    try:
        for fields in csv.reader(tap, delimiter=delimiter):
            line_no, original = tap.take()
            yield line_no, fields, original, tap.ended
    except csv.Error as err:  # a field over csv's size limit: the reader cannot resync, so the file is unreadable
        raise InputError(f"{path.name}: line {tap.consumed}: {err}") from None


def read_delimited(path: Path, src: SourceParams, delimiter: str) -> Iterator[RawRecord]:
    """CSV (quoted, RFC 4180) or TSV (no quoting, split on newline and tab only).

    A record's ``source_line`` is the line it starts on and ``raw`` its original bytes. An
    unclosed quote swallows the rest of the file into one record: it is rejected as
    ``unclosed_quote`` with those bytes, so nothing after it is lost either.
    """
    header = list(src.columns) if src.columns else None
    if header is not None:
        _check_columns(path, src, header, "in ingest.source.columns")
    for line_no, fields, original, unclosed in _delimited_rows(path, delimiter):
        raw = original.encode("utf-8", errors="surrogateescape")
        if unclosed:
            lines = original.rstrip("\r\n").count("\n") + 1
            log.warning("%s: the quote opened in the record starting at line %d is never closed; lines %d-%d "
                        "(%d lines, each possibly a record) are rejected as one record", path.name, line_no, line_no,
                        line_no + lines - 1, lines)
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="unclosed_quote", lines=lines)
            continue
        if not any(f.strip() for f in fields):
            continue
        if header is None:
            header = fields
            _check_columns(path, src, header, "in its header")
            continue
        if len(fields) != len(header):
            yield RawRecord(f"row-{line_no}", None, None, line_no, raw, problem="malformed")
            continue
        yield _from_mapping(dict(zip(header, fields, strict=True)), line_no, raw, src)


def read_parquet(path: Path, src: SourceParams) -> Iterator[RawRecord]:
    """Parquet rows in batches; ``raw`` is the row as JSON (binary cells decoded leniently)."""
    source: Path | io.BytesIO = io.BytesIO(_read_bytes(path)) if path.suffix.lower() == ".gz" else path
    if isinstance(source, Path) and not source.is_file():
        raise InputError(f"input file not found: {path}")
    try:
        parquet = pq.ParquetFile(source)
        _check_columns(path, src, parquet.schema_arrow.names, "in its schema")
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        row_no = 0
        for batch in batches:
            for row in batch.to_pylist():
                row_no += 1
                decoded = {k: v.decode("utf-8", errors="surrogateescape") if isinstance(v, bytes) else v
                           for k, v in row.items()}
                raw = json.dumps(decoded, default=str, ensure_ascii=False).encode("utf-8", errors="surrogateescape")
                yield _from_mapping(decoded, row_no, raw, src)
    except (pa.ArrowException, OSError) as err:
        raise InputError(f"{path.name}: not a readable Parquet file ({type(err).__name__})") from None


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
    """CoNLL/BIO: ``token<TAB>tag`` lines, sentences separated by lines empty after stripping (``src`` names no
    column: a sentence's id is ``sent-<first line>``)."""
    block: list[bytes] = []
    start_line = 1
    for line_no, raw_line in enumerate(itertools.chain(_lines(path), [b""]), start=1):
        if raw_line.strip():
            if not block:
                start_line = line_no
            block.append(raw_line.rstrip(b"\r"))
            continue
        if block:
            yield _conll_record(block, start_line, path.name)
            block = []


def _bad_tag(tags: list[str]) -> int | None:
    """The position of the first tag that is not ``O``, ``B-<label>`` or ``I-<label>`` (None: all are good)."""
    for position, tag in enumerate(tags):
        kind, dash, label = tag.partition("-")
        if tag != "O" and not (kind in ("B", "I") and dash and label):
            return position
    return None


def _conll_record(block: list[bytes], line: int, name: str) -> RawRecord:
    raw = b"\n".join(block)
    doc_id = f"sent-{line}"
    try:
        rows = [b.decode("utf-8").split() for b in block]
    except UnicodeDecodeError:
        return RawRecord(doc_id, None, None, line, raw, problem="non_utf8")
    if any(len(r) < 2 for r in rows):
        return RawRecord(doc_id, None, None, line, raw, problem="malformed")
    tags = [r[-1] for r in rows]
    bad = _bad_tag(tags)
    if bad is not None:  # its spans would silently be lost: rejected, the tag's line named (never the tag: may be text)
        log.warning("%s: line %d: a tag that is not O, B-<label> or I-<label>; sentence %s rejected (bad_spans)",
                    name, line + bad, doc_id)
        return RawRecord(doc_id, None, None, line, raw, problem="bad_spans")
    text, spans = _bio_spans([r[0] for r in rows], tags)
    label = "entity" if spans else "none"
    return RawRecord(doc_id, text, label, line, raw, spans=spans)


def read_records(path: str | Path, src: SourceParams) -> Iterator[RawRecord]:
    """Dispatch on ``src.format`` (or the suffix when ``auto``)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give one input file (.csv, .tsv, .jsonl, .parquet or .conll, "
                         "optionally .gz)")
    fmt = detect_format(path) if src.format == "auto" else src.format
    if fmt == "jsonl":
        return read_jsonl(path, src)
    if fmt in ("csv", "tsv"):
        return read_delimited(path, src, "," if fmt == "csv" else "\t")
    if fmt == "parquet":
        return read_parquet(path, src)
    return read_conll(path, src)
