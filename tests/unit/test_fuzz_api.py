"""Property-based fuzzing of ``POST /privatize``: any JSON body (and any bytes) gets a JSON answer with a status of the
contract, never a traceback, and no error echoes a text it was sent.

Examples (derandomized: CI sees the same ones every run): 100 arbitrary JSON values, 100 near-valid bodies (records of
fuzzed texts with lone surrogates, ids of any type up to 5000-digit integers, extra keys) and 50 arbitrary byte strings
— 250 requests; about 4 s on two shared cores (plus importing the app). ``make fuzz`` sends 10,000
(:mod:`tests.fuzzing`).
"""

from __future__ import annotations

import json

import pandas as pd
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import fuzz
from textsift.serving.app import create_app

TOKEN = "t" * 24
CONTRACT = {200, 400, 401, 413, 422, 429}
MARKER = "Zqxv"  # starts every generated text: an echoed text is found in an error by it


class EchoModel:
    """Upper-cases texts (as a privatizer answers: one row per request row, the request's ids)."""

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"id": frame["id"], "text": [t.upper() for t in frame["text"]]})


CLIENT = TestClient(create_app(EchoModel(), TOKEN, "fake", "fp", max_bytes=20_000, max_records=8, rate_limit=0),
                    raise_server_exceptions=True)
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
SURFACE = 250  # requests per CI run: 100 + 100 + 50
FUZZ = fuzz(100, SURFACE)

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                            max_size=4), max_leaves=12)
LONG = "long-integer"  # an id that becomes an integer of 5000 digits in the body (json.dumps cannot write one)
_surrogates = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])  # sent as JSON escapes
_texts = st.builds(lambda tail, odd: MARKER + tail + odd, st.text(max_size=30), st.one_of(st.just(""), _surrogates))
_ids = st.one_of(st.text(max_size=10), st.builds(lambda t, odd: t + odd, st.text(max_size=4), _surrogates),
                 st.integers(), st.integers(min_value=10**40), st.just(LONG), st.floats(), st.booleans(), st.none(),
                 st.lists(st.integers(), max_size=2))
_records = st.lists(st.fixed_dictionaries({}, optional={"text": st.one_of(_texts, _json), "id": _ids,
                                                        "extra": _json}), max_size=10)


def _check(response: object, sent: list[str]) -> None:
    """The contract: a known status, a JSON body, no traceback, no text sent in an error."""
    assert response.status_code in CONTRACT, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert "Traceback" not in response.text
    if response.status_code != 200:
        assert set(body) == {"error"} and not any(t in body["error"] for t in sent)
        assert MARKER not in body["error"]


def _post(body: bytes) -> object:
    return CLIENT.post("/privatize", content=body, headers=HEADERS)


@FUZZ
@given(payload=_json)
def test_any_json_body_gets_an_answer_of_the_contract(payload: object) -> None:
    _check(_post(json.dumps(payload).encode()), [])


@FUZZ
@given(records=_records, wrap=st.booleans())
def test_near_valid_bodies_get_an_answer_of_the_contract_that_echoes_no_text(records: list[dict], wrap: bool) -> None:
    """Texts with any code point (a lone surrogate is sent as its JSON escape), ids of any type and size."""
    body = json.dumps({"records": records} if wrap else records).replace(f'"{LONG}"', "7" * 5000).encode()
    sent = [r["text"] for r in records if isinstance(r.get("text"), str) and r["text"].startswith(MARKER)]
    response = _post(body)
    _check(response, sent)
    if response.status_code == 200:
        assert [r["text"] for r in response.json()["records"]] == [r["text"].upper() for r in records]


@fuzz(50, SURFACE)
@given(body=st.binary(max_size=300))
def test_any_bytes_get_an_answer_of_the_contract(body: bytes) -> None:
    _check(_post(body), [])
