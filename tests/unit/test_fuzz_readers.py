"""Property-based fuzzing of the readers: any bytes, in any format, give records or one ``InputError`` — never another
exception — and no error message holds the input's text.

Examples (derandomized, so CI sees the same ones every run): 150 arbitrary byte strings and 150 generated
near-valid inputs per format (csv, tsv, jsonl, conll, txt as tsv), plus 40 byte strings as gzipped jsonl — 1,540 in
all; about 16 s on two shared cores. ``make fuzz`` draws 10,000 (:mod:`tests.fuzzing`).
"""

from __future__ import annotations

import gzip
import json
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import fuzz
from textsift.corpus import RawRecord
from textsift.errors import InputError
from textsift.ingest_params import SourceParams
from textsift.readers import read_records

FORMATS = ("csv", "tsv", "jsonl", "conll", "txt")
SURFACE = 1_540  # inputs per CI run: 150 x 2 tests x 5 formats + 40 gzipped
FUZZ = fuzz(150, SURFACE)
SRC = SourceParams(kind="file", path="x", id_field="id", spans_field="spans")
MARKER = "Zqxv"  # the start of every generated field value: an echoed value is found in a message by it
_WORDS = st.text(alphabet=string.ascii_letters + " \t,\"'\\{}[]:-\r\n\x00é\u2028", max_size=12)


def _read(data: bytes, suffix: str) -> list[RawRecord] | InputError:
    """The records of ``data`` written as ``in.<suffix>``, or the InputError reading it raised (anything else fails)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"in.{suffix}"
        path.write_bytes(data)
        try:
            return list(read_records(path, SRC))
        except InputError as err:
            return err


def _no_text_in(error: InputError, values: list[str]) -> None:
    message = str(error)
    assert "\n" not in message, message
    assert all(v not in message for v in values if len(v) >= len(MARKER)), message


def _values() -> st.SearchStrategy[str]:
    return st.builds(lambda tail: MARKER + tail, _WORDS)


@st.composite
def _near_valid(draw: st.DrawFn, fmt: str) -> tuple[bytes, list[str]]:
    """An input shaped like ``fmt`` (header, objects, token/tag lines) with fuzzed values, and the values."""
    rows = draw(st.lists(st.fixed_dictionaries({}, optional={
        "id": st.one_of(_values(), st.integers(), st.none()), "text": st.one_of(_values(), st.integers(), st.none()),
        "label": _values(), "spans": st.one_of(_values(), st.lists(st.lists(st.integers(-3, 30), max_size=3)))}),
        max_size=5))
    values = [v for row in rows for v in row.values() if isinstance(v, str)]
    if fmt == "jsonl":
        lines = [json.dumps(row) if draw(st.booleans()) else str(row) for row in rows]
        return "\n".join(lines).encode("utf-8", "surrogatepass"), values
    if fmt == "conll":
        tags = st.sampled_from(["O", "B-PER", "I-PER", "B-", "X-FOO", "I", "", MARKER])
        lines = [f"{v}\t{draw(tags)}" if draw(st.booleans()) else "" for v in values]
        return "\n".join(lines).encode("utf-8", "surrogatepass"), values
    sep = "," if fmt == "csv" else "\t"
    header = draw(st.permutations(["id", "text", "label", "spans"]))
    lines = [sep.join(header)] + [sep.join(str(row.get(c, "")) for c in header) for row in rows]
    return "\n".join(lines).encode("utf-8", "surrogatepass"), values


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_give_records_or_an_input_error(fmt: str, data: bytes) -> None:
    got = _read(data, fmt)
    if isinstance(got, InputError):
        _no_text_in(got, [])
        assert len(str(got)) < 300
    else:
        assert all(isinstance(r, RawRecord) for r in got)


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.data())
def test_near_valid_input_never_echoes_its_text_in_an_error(fmt: str, data: st.DataObject) -> None:
    content, values = data.draw(_near_valid(fmt))
    got = _read(content, fmt)
    if isinstance(got, InputError):
        _no_text_in(got, values)
    else:
        assert all(isinstance(r, RawRecord) for r in got)


@fuzz(40, SURFACE)
@given(data=st.binary(max_size=300), compress=st.booleans())
def test_a_gzipped_file_of_any_bytes_gives_records_or_an_input_error(data: bytes, compress: bool) -> None:
    """Compressed or not (a file named .gz that is not gzip), possibly cut short."""
    payload = gzip.compress(data)[: len(data) or None] if compress else data
    got = _read(payload, "jsonl.gz")
    if isinstance(got, InputError):
        _no_text_in(got, [])
