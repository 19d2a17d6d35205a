"""Readers: every format, every bad-record kind, and the ingest validation rules."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textsift.corpus import Span
from textsift.errors import InputError
from textsift.ingest_params import IngestParams, SourceParams
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
    assert clean[1].text == "good <br /> text"  # kept as given; "fine  text" is still a duplicate of "fine text"
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


def test_wrong_types_in_parquet_are_rejected_not_stringified(tmp_path: Path) -> None:
    path = tmp_path / "typed.parquet"
    rows = [
        {"id": "ok", "text": "fine", "label": 1.0, "other": "x"},
        {"id": "int-text", "text": None, "label": 1.0, "other": "x"},
        {"id": "half", "text": "fine too", "label": 0.5, "other": "x"},
        {"id": "nan", "text": "no label", "label": float("nan"), "other": "x"},
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    int_text = tmp_path / "int_text.parquet"
    pq.write_table(pa.table({"id": ["n"], "text": [5], "label": ["a"]}), int_text)
    list_text = tmp_path / "list_text.parquet"
    pq.write_table(pa.table({"id": ["l"], "text": [["a", "b"]], "label": ["a"]}), list_text)
    got = records(path) + records(int_text) + records(list_text)
    assert [(r.doc_id, r.problem) for r in got] == [
        ("ok", None), ("int-text", None), ("half", "bad_type"), ("nan", None), ("n", "bad_type"), ("l", "bad_type")]
    assert got[0].label == "1"  # an integral float (pandas' int column with gaps) is its integer
    clean, rejects, _ = validate_records(got, IngestParams())
    assert [r.doc_id for r in clean] == ["ok"]
    assert {row["doc_id"]: row["reason"] for row in rejects.rows} == {
        "int-text": "empty", "half": "bad_type", "nan": "missing_label", "n": "bad_type", "l": "bad_type"}
    assert json.loads(rejects.rows[-1]["raw"])["text"] == ["a", "b"]  # the original row is kept


def test_wrong_types_in_jsonl_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "typed.jsonl"
    path.write_text('{"id": "a", "text": 12, "label": "x"}\n{"id": 7, "text": "ok", "label": true}\n'
                    '{"id": [1], "text": "ok", "label": "x"}\n{"id": "b", "text": "ok", "label": {"k": 1}}\n',
                    encoding="utf-8")
    got = records(path)
    assert [(r.doc_id, r.problem) for r in got] == [
        ("a", "bad_type"), ("7", None), ("row-3", "bad_type"), ("b", "bad_type")]
    assert got[1].label == "True"


def test_unclosed_csv_quote_is_one_reject_from_its_first_line_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    body = 'id,text,label\n1,"two\nlines",a\n2,fine,b\n3,"never closed,c\n4,lost?,d\n'
    path.write_text(body, encoding="utf-8")
    got = records(path)
    assert [(r.doc_id, r.source_line, r.problem) for r in got] == [
        ("1", 2, None), ("2", 4, None), ("row-5", 5, "unclosed_quote")]
    assert got[0].raw == b'1,"two\nlines",a'  # the record's original bytes, quotes included
    assert got[2].raw == b'3,"never closed,c\n4,lost?,d'  # nothing after the quote is lost
    _, rejects, _ = validate_records(got, IngestParams())
    assert rejects.counts() == {"unclosed_quote": 1}


def test_truncated_gzip_is_a_one_line_input_error(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": "a", "text": "t", "label": "x"}\n' * 50)[:40])
    with pytest.raises(InputError, match=r"in\.jsonl\.gz: truncated or corrupt gzip \(") as err:
        records(path)
    assert "\n" not in str(err.value)
    (tmp_path / "not.csv.gz").write_bytes(b"plain text, not gzip")
    with pytest.raises(InputError, match="truncated or corrupt gzip"):
        records(tmp_path / "not.csv.gz")


def test_corrupt_or_missing_parquet_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "in.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        records(path)
    with pytest.raises(InputError, match="not found"):
        records(tmp_path / "absent.parquet")


def test_unlabelled_records_are_accepted_when_labels_are_not_required(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two", "label": "x"}\n', encoding="utf-8")
    got = records(path, label_field=None)
    _, rejects, _ = validate_records(got, IngestParams())
    assert rejects.counts() == {"missing_label": 2}
    clean, rejects, _ = validate_records(got, IngestParams(), require_label=False)
    assert [(r.doc_id, r.label) for r in clean] == [("a", ""), ("b", "")] and not rejects.rows


def test_short_id_and_reject_fraction_message(tmp_path: Path) -> None:
    from textsift.corpus import RawRecord, Rejects
    from textsift.record_ids import short_id
    from textsift.validation import check_reject_fraction

    assert short_id("abc") == "abc" and short_id("ticket-17:a.b") == "ticket-17:a.b"
    long_id = "secret text pasted into the id column " * 5
    assert short_id(long_id).startswith("id#") and len(short_id(long_id)) == 15
    assert short_id("Maria Lopez, 12 Elm St") != short_id("Maria Lopez, 12 Elm Rd")  # a digest: no text, distinct
    assert "Maria" not in short_id("Maria Lopez, 12 Elm St") and short_id("a\nb\x00c").startswith("id#")
    rejects = Rejects()
    rejects.add(RawRecord(long_id, None, None, 3, b"raw"), "empty")
    check_reject_fraction(rejects, 20, 0.05, "r.parquet")  # 5% is not above 5%
    with pytest.raises(InputError) as err:
        check_reject_fraction(rejects, 10, 0.05, "r.parquet")
    message = str(err.value)
    assert "1 of 10 records rejected" in message and "{'empty': 1}" in message and "see r.parquet" in message
    assert short_id(long_id) in message and long_id not in message


def test_validation_logs_progress_with_counts_and_no_text(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"private words {i}", "label": "x"}) + "\n"
                            for i in range(5)) + '{"id": "e", "text": "", "label": "x"}\n', encoding="utf-8")
    with caplog.at_level("INFO", logger="textsift"):
        validate_records(records(path), IngestParams(), progress_every=2)
    messages = [r.getMessage() for r in caplog.records if r.name == "textsift"]
    assert "validated 2 records: 2 accepted, 0 rejected" in messages[0]
    assert len(messages) == 3 and "6 records: 5 accepted, 1 rejected {'empty': 1}" in messages[-1]
    assert not any("private" in m for m in messages)


def test_known_interests_are_read_normalized_and_an_unknown_category_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "interests.csv"
    path.write_text("id,text,label,interest\na,one,x,Sports \nb,two,x,none\nc,three,x,\nd,four,x,knitting\n"
                    "e,five,x,games\n", encoding="utf-8")
    got = records(path, interest_field="interest")
    assert [r.interest for r in got] == ["Sports ", "none", "", "knitting", "games"]
    clean, rejects, _ = validate_records(got, IngestParams())
    assert [(r.doc_id, r.interest) for r in clean] == [("a", "sports"), ("b", "none"), ("c", None), ("e", "games")]
    assert [(row["doc_id"], row["reason"]) for row in rejects.rows] == [("d", "bad_interest")]
    assert all(r.interest is None for r in records(path))  # no interest_field: nothing known


def test_records_swallowed_by_an_unclosed_quote_count_against_the_reject_fraction(tmp_path: Path) -> None:
    """The probe's file: 100 records, an unclosed quote on line 52 — "51 read, 1 rejected" hid 49 lost records."""
    from textsift.validation import check_reject_fraction

    path = tmp_path / "in.csv"
    rows = [f"{i},message {i},a" for i in range(1, 101)]
    rows[50] = '51,"this quote never closes,a'
    path.write_text("id,text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    got = records(path)
    assert got[-1].problem == "unclosed_quote" and got[-1].source_line == 52 and got[-1].lines == 50
    _, rejects, _ = validate_records(got, IngestParams())
    assert rejects.counts() == {"unclosed_quote": 1} and rejects.swallowed == 49
    with pytest.raises(InputError, match=r"50 of 100 records rejected \(of them 49 lines swallowed by an unclosed "
                                         r"quote\) \(50\.0% > ingest\.max_reject_fraction=5\.0%\)"):
        check_reject_fraction(rejects, len(got), 0.05, "r.parquet")


def test_a_folder_as_input_is_named_as_a_folder(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").mkdir()
    for path, fmt in ((tmp_path, "auto"), (tmp_path / "data.jsonl", "auto"), (tmp_path, "jsonl")):
        with pytest.raises(InputError, match=r"is a folder; give one input file \(\.csv"):
            records(path, format=fmt)


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet", "jsonl"])
def test_a_missing_column_is_named_with_its_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"in.{suffix}"
    rows = [{"id": "a", "body": "Call Ann Lee now", "label": "x"}]
    if suffix == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        sep = "," if suffix == "csv" else "\t"
        path.write_text(sep.join(rows[0]) + "\n" + sep.join(rows[0].values()) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"in\.{suffix}: no column 'text' .*ingest\.source\.text_field \(--text-field"
                       ) as err:
        records(path)
    assert "Ann" not in str(err.value) and "body" not in str(err.value)  # never a value (nor a header: may be a record)
    with pytest.raises(InputError, match=rf"in\.{suffix}: no column 'group' .*ingest\.source\.split_field"):
        records(path, text_field="body", split_field="group")
    assert [r.text for r in records(path, text_field="body")] == ["Call Ann Lee now"]


def test_a_jsonl_record_may_lack_a_field_the_file_has(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "text": "one", "label": "x"}\n{"id": "b", "label": "x"}\n', encoding="utf-8")
    assert [r.text for r in records(path)] == ["one", None]  # the second is rejected by validation as empty


def test_a_headerless_file_whose_columns_miss_a_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "sms.tsv"
    path.write_text("ham\tGo now\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"sms\.tsv: no column 'text' in ingest\.source\.columns"):
        records(path, id_field=None, columns=["label", "body"])


@pytest.mark.parametrize("tag", ["B-", "X-FOO", "I", "b-PER", "B_PER"])
def test_a_bad_bio_tag_rejects_its_sentence_and_names_the_line(tmp_path: Path, tag: str,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "in.conll"
    path.write_text(f"fine\tO\n\nVisit\tO\nAnn\t{tag}\nnow\tO\n\nBob\tB-PER\n", encoding="utf-8")
    got = records(path)
    assert [(r.doc_id, r.problem) for r in got] == [("sent-1", None), ("sent-3", "bad_spans"), ("sent-7", None)]
    assert got[2].spans == (Span(0, 3, "PER"),)
    assert "in.conll: line 4: a tag that is not O, B-<label> or I-<label>" in caplog.text
    assert "Ann" not in caplog.text


def test_a_csv_field_over_the_csv_limit_is_one_input_error(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text('id,text,label\n1,ok,a\n2,"' + "word " * 40_000 + '",a\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"in\.csv: line 3: field larger than field limit") as err:
        records(path)
    assert "word" not in str(err.value)
