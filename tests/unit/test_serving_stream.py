"""``POST /privatize/stream``: NDJSON records privatized a chunk at a time, answers streamed back in order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from textsift.serving.app import create_app

TOKEN = "t" * 24
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "Maria Lopez 555-0100"


class Recording:
    """Upper-cases each text and keeps every frame it was given (how many rows per model call)."""

    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        self.frames.append(frame.copy())
        return pd.DataFrame({"id": frame["id"], "text": [t.upper() for t in frame["text"]]})


def _lines(records: list[object], piece: int = 7) -> Iterator[bytes]:
    """The NDJSON body sent in small pieces, lines cut anywhere (as a network delivers them)."""
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    for start in range(0, len(body), piece):
        yield body[start:start + piece]


def _stream(client: TestClient, records: list[object], query: str = "") -> tuple[int, list[dict]]:
    response = client.post(f"/privatize/stream{query}", content=_lines(records), headers=AUTH)
    if response.status_code != 200:
        return response.status_code, [response.json()]
    assert response.headers["content-type"] == "application/x-ndjson"
    return 200, [json.loads(line) for line in response.text.splitlines()]


def test_a_stream_is_answered_in_order_a_chunk_of_max_records_at_a_time(tmp_path: Path) -> None:
    model = Recording()
    audit = tmp_path / "audit.jsonl"
    client = TestClient(create_app(model, TOKEN, "fake", "fp", max_records=4, max_bytes=200, audit=audit))
    records = [{"id": f"d{k}", "text": f"text {k}"} for k in range(10)]
    status, answers = _stream(client, records)
    assert status == 200 and answers == [{"id": f"d{k}", "text": f"TEXT {k}"} for k in range(10)]
    assert [len(f) for f in model.frames] == [4, 4, 2]  # never more than one chunk held: 10 records > max_records
    assert "textsift_documents_total 10" in client.get("/metrics").text
    assert [(a["status"], a["records"]) for a in map(json.loads, audit.read_text().splitlines())] == [(200, 10)]
    model.frames.clear()
    longer = [{"id": f"d{k}", "text": "x" * 60} for k in range(6)]  # 82 bytes a line: a chunk closes past 200
    status, answers = _stream(client, longer)
    assert status == 200 and len(answers) == 6 and [len(f) for f in model.frames] == [3, 3]


def test_the_query_string_carries_what_a_json_body_names_beside_its_records() -> None:
    model = Recording()
    client = TestClient(create_app(model, TOKEN, "fake", "fp"))
    query = "?entities=direct,LOC&threshold=0.2&operators=PERSON:hash,DATE:placeholder"
    status, _ = _stream(client, [{"text": "a"}], query)
    frame = model.frames[-1]
    assert status == 200 and list(frame["entities"]) == ["direct,LOC"] and list(frame["threshold"]) == [0.2]
    assert json.loads(frame["operators"].iloc[0]) == {"DATE": "placeholder", "PERSON": "hash"}
    for bad, error in (("?entities=direct," + SECRET, "is not an entity type"), ("?threshold=x", "\"threshold\""),
                       ("?operators=" + SECRET, "\"operators\" must be"), ("?labels=PERSON", "takes entities")):
        status, answer = _stream(client, [{"text": "a"}], bad)
        assert status == 422 and error in answer[0]["error"] and "Maria" not in answer[0]["error"]


def test_a_bad_record_ends_the_stream_with_an_error_line_and_what_came_before_stands() -> None:
    model = Recording()
    client = TestClient(create_app(model, TOKEN, "fake", "fp", max_records=2, max_bytes=200))
    records: list[object] = [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"txt": SECRET}, {"text": "e"}]
    status, answers = _stream(client, records)
    assert status == 200 and [a.get("text") for a in answers[:2]] == ["A", "B"]
    assert answers[-1] == {"error": "record 3: needs a non-empty string \"text\"", "answered": 2}
    assert len(answers) == 3 and "Maria" not in json.dumps(answers)  # "c" waited in the chunk that record 3 ended
    status, answers = _stream(client, [{"text": "a"}, {"id": "x", "text": "b"}])
    assert answers == [{"error": "record 1 (id 'x'): give every record an \"id\", or none", "answered": 0}]
    status, answers = _stream(client, [{"text": "a"}, {"text": SECRET * 20}])
    assert answers == [{"error": "record 1: is over 200 bytes", "answered": 0}]


def test_the_rate_limit_and_a_failed_model_call_end_a_stream_without_its_text(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    client = TestClient(create_app(Recording(), TOKEN, "fake", "fp", max_records=2, rate_limit=3, audit=audit))
    status, answers = _stream(client, [{"text": f"t{k}"} for k in range(5)])
    assert status == 200 and len(answers) == 3 and answers[-1]["answered"] == 2
    assert answers[-1]["error"].startswith("over the rate limit of 3 records per minute")
    assert [(a["status"], a["records"]) for a in map(json.loads, audit.read_text().splitlines())] == [(429, 2)]

    class Failing(Recording):
        def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
            raise RuntimeError(f"cannot privatize {list(frame['text'])}")

    client = TestClient(create_app(Failing(), TOKEN, "fake", "fp"))
    status, answers = _stream(client, [{"text": SECRET}])
    assert answers == [{"error": "the privatizer failed (RuntimeError)", "answered": 0}]
    assert client.post("/privatize/stream", content=b'{"text": "a"}\n').status_code == 401


def test_a_stream_over_the_servers_limit_is_a_413_before_anything_is_privatized() -> None:
    model = Recording()
    client = TestClient(create_app(model, TOKEN, "fake", "fp", max_stream_bytes=500))
    status, answer = _stream(client, [{"text": SECRET}] * 30)  # sent in pieces: no length declared
    assert status == 413 and answer == [{"error": "the stream is over 500 bytes"}] and not model.frames
    declared = client.post("/privatize/stream", content=b'{"text": "a"}\n' * 50, headers=AUTH)  # a Content-Length
    assert declared.status_code == 413 and not model.frames
    status, answers = _stream(client, [{"text": SECRET}] * 5)  # under it: answered
    assert status == 200 and len(answers) == 5


def test_streams_beyond_the_servers_places_wait_their_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    from textsift.serving import app as serving_app

    monkeypatch.setattr(serving_app, "STREAMS_AT_ONCE", 0)  # every place taken
    status, answer = _stream(TestClient(create_app(Recording(), TOKEN, "fake", "fp")), [{"text": "a"}])
    assert status == 503 and "streams are being answered" in answer[0]["error"]
