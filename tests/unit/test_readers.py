"""Readers: every format, every bad-record kind, and the ingest validation rules."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textsift.config import IngestParams, SourceParams
from textsift.corpus import Span
from textsift.errors import InputError
from textsift.readers import detect_format, read_records
from textsift.validation import validate_records

SRC = SourceParams(kind="file", path="x", id_field="id")


def records(path: Path, **kw):
    return list(read_records(path, SRC.model_copy(update=kw)))


def test_csv_with_quotes_and_header(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text('id,text,label\n1,"Hello, ""quoted"" world",pos\n2,plain,neg\n', encoding="utf-8")
    got = records(path)
    assert [r.doc_id for r in got] == ["1", "2"]
    assert got[0].text == 'Hello, "quoted" world'
    assert got[1].label == "neg"


def test_headerless_tsv_with_columns(tmp_path: Path) -> None:
    path = tmp_path / "sms.tsv"
    path.write_bytes(b'ham\tGo until "jurong" point\r\nspam\tWIN cash now\n')
    got = records(path, id_field=None, columns=["label", "text"])
    assert [(r.doc_id, r.label, r.text) for r in got] == [
        ("row-1", "ham", 'Go until "jurong" point'), ("row-2", "spam", "WIN cash now")]


def test_jsonl_gz_with_spans(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl.gz"
    spans = [{"start": 5, "end": 8, "label": "PERSON"}]
    rows = [{"id": "a", "text": "Call Ann now", "label": "x", "spans": spans}]
    path.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in rows).encode()))
    got = records(path, spans_field="spans")
    assert got[0].spans == (Span(5, 8, "PERSON"),)
    assert detect_format(path) == "jsonl"


def test_parquet(tmp_path: Path) -> None:
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["one", "two"], "label": [1, 0]}), path)
    got = records(path)
    assert [(r.doc_id, r.text, r.label) for r in got] == [("a", "one", "1"), ("b", "two", "0")]


def test_conll_bio_to_character_spans(tmp_path: Path) -> None:
    path = tmp_path / "in.conll"
    path.write_text("Visit\tO\nNew\tB-location\nYork\tI-location\nwith\tO\nAnn\tB-person\n\t\n"
                    "nothing\tO\nhere\tO\n", encoding="utf-8")
    got = records(path)
    assert got[0].text == "Visit New York with Ann"
    assert [(got[0].text[s.start:s.end], s.label) for s in got[0].spans] == [
        ("New York", "location"), ("Ann", "person")]
    assert got[0].label == "entity" and got[1].label == "none"


def test_unknown_suffix_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="format"):
        detect_format(tmp_path / "data.xlsx")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        records(tmp_path / "absent.jsonl")


def _bad_jsonl(tmp_path: Path) -> Path:
    lines = [
        json.dumps({"id": "ok1", "text": "fine text", "label": "a"}).encode(),
        b'{"id": "bad-bytes", "text": "caf\xe9", "label": "a"}',
        b'{"id": "broken", "text": ',
        json.dumps({"id": "empty", "text": "   ", "label": "a"}).encode(),
        json.dumps({"id": "long", "text": "x" * 50, "label": "a"}).encode(),
        json.dumps({"id": "nolabel", "text": "no label here", "label": ""}).encode(),
        json.dumps({"id": "ok1", "text": "another text", "label": "a"}).encode(),
        json.dumps({"id": "dup", "text": "fine  text", "label": "b"}).encode(),
        json.dumps({"id": "spans", "text": "short", "label": "a",
                    "spans": [{"start": 2, "end": 9, "label": "P"}]}).encode(),
        json.dumps({"id": "ok2", "text": "good <br /> text", "label": "b"}).encode(),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


def test_every_bad_record_kind_is_rejected_with_its_id(tmp_path: Path) -> None:
    params = IngestParams(max_chars=40)
    clean, rejects, total = validate_records(records(_bad_jsonl(tmp_path), spans_field="spans"), params)
    assert total == 10
    assert [r.doc_id for r in clean] == ["ok1", "ok2"]
    assert clean[1].text == "good text"
    reasons = {row["doc_id"]: row["reason"] for row in rejects.rows}
    assert reasons == {
        "row-2": "non_utf8", "row-3": "malformed", "empty": "empty", "long": "too_long",
        "nolabel": "missing_label", "ok1": "duplicate_id", "dup": "duplicate_text", "spans": "bad_spans",
    }
    raw_bytes = {row["doc_id"]: row["raw"] for row in rejects.rows}
    assert b"caf\xe9" in raw_bytes["row-2"]  # the original bytes are kept, nothing is lost


def test_non_utf8_in_csv_is_per_record(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(b"id,text,label\n1,good,pos\n2,bad \xff byte,neg\n")
    got = records(path)
    assert got[0].problem is None and got[1].problem == "non_utf8"
    assert got[1].raw == b"2,bad \xff byte,neg"


def test_dedupe_can_be_switched_off(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("id,text,label\n1,same,a\n2,same,a\n", encoding="utf-8")
    clean, _, _ = validate_records(records(path), IngestParams(dedupe=False))
    assert len(clean) == 2


def test_real_wnut17_reads(shared_data: Path) -> None:
    got = records(shared_data / "wnut17" / "wnut17train.conll", id_field=None)
    assert len(got) == 3394
    with_spans = [r for r in got if r.spans]
    assert with_spans and all(0 <= s.start < s.end <= len(r.text) for r in with_spans for s in r.spans)


def test_real_sms_spam_reads(shared_data: Path) -> None:
    got = records(shared_data / "sms_spam" / "SMSSpamCollection", id_field=None, format="tsv",
                  columns=["label", "text"])
    assert len(got) == 5574
    assert {r.label for r in got} == {"ham", "spam"}
