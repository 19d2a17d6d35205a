"""The REST API's error contract: bad input is a JSON 422 naming the record, every 5xx is JSON and counted."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from textsift.serving.app import create_app

TOKEN = "t" * 24
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
SECRET = "Maria Lopez 555-0100"


class EchoModel:
    """Upper-cases each text; ``fail`` makes it raise, with the texts in the message (as a careless library would)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        if self.fail:
            raise RuntimeError(f"cannot privatize {list(frame['text'])}")
        return pd.DataFrame({"id": frame["id"], "text": [t.upper() for t in frame["text"]]})


def _client(model: object | None = None) -> TestClient:
    """A client that raises any exception the app lets through (the server would answer it as plain text)."""
    return TestClient(create_app(model or EchoModel(), TOKEN, "fake", "fp"), raise_server_exceptions=True)


def _post(client: TestClient, body: str) -> tuple[int, dict]:
    response = client.post("/privatize", content=body.encode(), headers=HEADERS)
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()


def _status_count(client: TestClient, status: int) -> int:
    line = next((x for x in client.get("/metrics").text.splitlines() if f'status="{status}"' in x), "0 0")
    return int(line.split()[-1])


@pytest.mark.parametrize("body", [
    '{"records": [{"id": "a1", "text": "' + SECRET + ' \\ud800"}]}',  # alone
    '{"records": [{"id": "a0", "text": "fine"}, {"id": "a1", "text": "' + SECRET + ' \\udfff end"}]}',  # joined
])
def test_a_lone_surrogate_in_text_is_a_422_naming_the_record(body: str) -> None:
    status, answer = _post(_client(), body)
    assert status == 422 and answer["error"].startswith("record ") and "(id 'a1')" in answer["error"]
    assert "surrogate" in answer["error"] and "Maria" not in answer["error"]


def test_a_lone_surrogate_in_an_id_is_a_422_that_does_not_echo_it() -> None:
    status, answer = _post(_client(), '{"records": [{"id": "x\\ud800", "text": "fine"}]}')
    assert (status, answer) == (422, {"error": 'record 0: "id" is not valid Unicode (a lone surrogate escape, '
                                               '\\ud800-\\udfff)'})


def test_an_integer_id_of_5000_digits_is_a_422_naming_the_record() -> None:
    client = _client()
    status, answer = _post(client, '{"records": [{"id": 1, "text": "ok"}, {"id": ' + "7" * 5000 + ', "text": "hi"}]}')
    assert (status, answer["error"]) == (422, 'record 1: "id" is an integer of 5000 digits; send a long id as a string')
    assert _post(client, '{"records": [{"id": ' + "7" * 300 + ', "text": "hi"}]}') == (
        200, {"records": [{"id": "7" * 300, "text": "HI"}]})  # long, but convertible: served as before


def test_every_5xx_is_json_counted_and_holds_no_text(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client(EchoModel(fail=True))
    status, answer = _post(client, json.dumps({"records": [{"id": "a", "text": SECRET}]}))
    assert (status, answer) == (500, {"error": "the privatizer failed (RuntimeError)"})
    assert _status_count(client, 500) == 1

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError(f"rendering failed on {SECRET}")
    client = _client()  # a fault outside the model call: building the answer
    monkeypatch.setattr(pd.DataFrame, "to_dict", broken)
    response = client.post("/privatize", json={"records": [{"id": "a", "text": SECRET}]}, headers=HEADERS)
    assert response.status_code == 500 and response.json() == {"error": "the server failed (ValueError)"}
    assert SECRET not in response.text and _status_count(client, 500) == 1


@pytest.mark.parametrize(("body", "error"), [
    ('{"records": [{"id": "a", "text": "' + SECRET + '", "entities": ["PERSON"]}]}',
     "record 0 (id 'a'): \"entities\" is not a record field (a record has \"text\" and an optional \"id\")"),
    ('{"records": [{"text": "fine"}, {"text": "' + SECRET + '", "' + SECRET + '": 1}]}',
     "record 1: a field is not a record field (a record has \"text\" and an optional \"id\")"),
    ('{"records": [{"text": "' + SECRET + '"}], "operator": {"PERSON": "mask"}}',
     "\"operator\" is not a field of the body (it has \"records\" and optional \"entities\", \"threshold\" and "
     "\"operators\")"),
    ('{"records": [{"text": "' + SECRET + '"}], "operators": {"' + SECRET + '": "mask"}}',
     "an \"operators\" key is not an entity type: the types are PERSON, LOC, ORG, JOB, EDU, DATE, EMAIL, PHONE, ID, "
     "URL"),
    ('{"records": [{"text": "' + SECRET + '"}], "operators": ["PERSON"]}',
     "\"operators\" must be a non-empty object of entity type -> operator, e.g. {\"PERSON\": \"placeholder\"}"),
    ('{"records": [{"text": "' + SECRET + '"}], "entities": ["PERSON", "555-0100"]}',
     "\"entities\"[1] is not an entity type: the types are PERSON, LOC, ORG, JOB, EDU, DATE, EMAIL, PHONE, ID, URL "
     "and the groups direct, quasi, all"),
    ('{"records": [{"text": "' + SECRET + '"}], "entities": "PERSON"}',
     "\"entities\" must be a non-empty list of entity types or groups"),
])
def test_a_field_the_service_does_not_read_is_a_422_not_ignored(body: str, error: str) -> None:
    """A client asking for entity types or operators learns they are not applied, instead of a 200 that ignored them;
    a field name that could be text is not echoed."""
    client = _client()
    assert _post(client, body) == (422, {"error": error})
    assert _status_count(client, 200) == 0


class _Span:
    def __init__(self, start: int, end: int, label: str) -> None:
        self.start, self.end, self.label = start, end, label


def _capitalized(texts: list[str], entities: list[str] | None, threshold: float | None = None) -> list[list[_Span]]:
    """A stand-in analyzer: every capitalized word is a PERSON, a LOC too when ``entities`` names LOC."""
    import re

    labels = ["PERSON", *(["LOC"] if entities and "LOC" in entities else [])]
    return [[_Span(m.start(), m.end(), label) for m in re.finditer(r"\b[A-Z][a-z]+", t) for label in labels]
            for t in texts]


def test_analyze_answers_the_entities_of_each_record_with_offsets_into_it_and_no_score() -> None:
    client = TestClient(create_app(EchoModel(), TOKEN, "fake", "fp", analyzer=_capitalized))
    status, answer = _post_to(client, "/analyze", '{"records": [{"id": "a", "text": "call Ann  at\\r\\nnoon"}, '
                                                  '{"id": "b", "text": "no one"}]}')
    assert status == 200 and answer == {"records": [{"id": "a", "entities": [{"start": 5, "end": 8, "type": "PERSON"}]},
                                                    {"id": "b", "entities": []}]}
    status, answer = _post_to(client, "/analyze", '{"records": [{"text": "' + SECRET + '", "entities": ["X"]}]}')
    assert status == 422 and "Maria" not in answer["error"]  # the same validation as /privatize
    assert client.post("/analyze", json={"records": [{"text": "x"}]}).status_code == 401


def test_a_service_without_an_analyzer_says_so() -> None:
    status, answer = _post_to(_client(), "/analyze", '{"records": [{"text": "fine"}]}')
    assert (status, answer) == (404, {"error": "this service does not analyze: it serves /privatize only"})


def _post_to(client: TestClient, route: str, body: str) -> tuple[int, dict]:
    response = client.post(route, content=body.encode(), headers=HEADERS)
    return response.status_code, response.json()


class _Recording(EchoModel):
    """An echo model that keeps a copy of every frame it is given in ``seen``."""

    def __init__(self, seen: list[pd.DataFrame]) -> None:
        super().__init__()
        self.seen = seen

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        self.seen.append(frame.copy())
        return super().predict(frame)


def test_the_entities_a_request_names_reach_the_model_and_the_analyzer() -> None:
    seen: list[pd.DataFrame] = []
    client = TestClient(create_app(_Recording(seen), TOKEN, "fake", "fp", analyzer=_capitalized))
    status, _ = _post_to(client, "/privatize", '{"records": [{"text": "x"}], "entities": ["direct", "LOC"]}')
    assert status == 200 and list(seen[-1]["entities"]) == ["direct,LOC"]
    status, _ = _post_to(client, "/privatize", '{"records": [{"text": "x"}]}')
    assert status == 200 and "entities" not in seen[-1]
    status, answer = _post_to(client, "/analyze", '{"records": [{"text": "see Rome"}], "entities": ["direct", "LOC"]}')
    assert status == 200 and [e["type"] for e in answer["records"][0]["entities"]] == ["PERSON", "LOC"]


def test_a_requests_operators_reach_the_model_as_one_json_object_and_never_the_analyzer() -> None:
    seen: list[pd.DataFrame] = []
    client = TestClient(create_app(_Recording(seen), TOKEN, "fake", "fp", analyzer=_capitalized))
    body = '{"records": [{"text": "x"}, {"text": "y"}], "operators": {"PERSON": "hash", "DATE": "placeholder"}}'
    status, _ = _post_to(client, "/privatize", body)
    assert status == 200 and [json.loads(v) for v in seen[-1]["operators"]] == [
        {"DATE": "placeholder", "PERSON": "hash"}] * 2
    status, answer = _post_to(client, "/analyze", body)
    assert status == 422 and answer["error"] == ("InputError: \"operators\" apply to /privatize: /analyze replaces "
                                                 "nothing")
    old = TestClient(create_app(EchoModel(), TOKEN, "fake", "fp", takes=frozenset({"entities", "threshold"})))
    status, answer = _post_to(old, "/privatize", body)  # a version registered before operators: refused, not ignored
    assert status == 422 and "takes no \"operators\"" in answer["error"]


def test_a_model_that_cannot_read_entities_refuses_them_rather_than_ignoring_them() -> None:
    client = TestClient(create_app(EchoModel(), TOKEN, "fake", "fp", takes=frozenset({"threshold"})))
    status, answer = _post_to(client, "/privatize", '{"records": [{"text": "x"}], "entities": ["all"]}')
    assert status == 422 and "takes no \"entities\"" in answer["error"]
    assert _post_to(client, "/privatize", '{"records": [{"text": "x"}]}')[0] == 200
    client = TestClient(create_app(EchoModel(), TOKEN, "fake", "fp", takes=frozenset({"entities"})))
    status, answer = _post_to(client, "/privatize", '{"records": [{"text": "x"}], "threshold": 0.2}')
    assert status == 422 and "takes no \"threshold\"" in answer["error"]


def test_a_requests_threshold_reaches_the_model_and_the_analyzer_and_bad_ones_are_422() -> None:
    seen: list[pd.DataFrame] = []
    asked: list[float | None] = []

    class Recording(EchoModel):
        def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
            seen.append(frame.copy())
            return super().predict(frame)

    def analyzer(texts: list[str], entities: list[str] | None, threshold: float | None) -> list[list[_Span]]:
        asked.append(threshold)
        return _capitalized(texts, entities)

    client = TestClient(create_app(Recording(), TOKEN, "fake", "fp", analyzer=analyzer))
    assert _post_to(client, "/privatize", '{"records": [{"text": "x"}], "threshold": 0.05}')[0] == 200
    assert list(seen[-1]["threshold"]) == [0.05]
    assert _post_to(client, "/analyze", '{"records": [{"text": "x"}], "threshold": 1}')[0] == 200
    assert _post_to(client, "/analyze", '{"records": [{"text": "x"}]}')[0] == 200 and asked == [1.0, None]
    for bad in ("0", "0.01", "1.5", "-0.1", "true", '"0.2"', "null", "[0.2]"):
        status, answer = _post_to(client, "/privatize", '{"records": [{"text": "' + SECRET + '"}], "threshold": '
                                  + bad + "}")
        assert status == 422 and answer["error"].startswith('"threshold" must be a number in [0.02, 1]'), bad
        assert "Maria" not in answer["error"]


def test_the_openapi_document_describes_exactly_the_fields_the_parser_accepts() -> None:
    from textsift.serving.app import BODY_FIELDS, RECORD_FIELDS

    document = _client().get("/openapi.json")
    assert document.status_code == 200 and "$defs" not in document.text  # every reference inlined: all resolve
    paths = document.json()["paths"]
    for route, answer_fields in (("/privatize", {"id", "text", "epsilon", "replaced"}),
                                 ("/analyze", {"id", "entities"})):
        operation = paths[route]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert set(body["properties"]) == set(BODY_FIELDS) and body["required"] == ["records"]
        assert set(body["properties"]["records"]["items"]["properties"]) == set(RECORD_FIELDS)
        answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert set(answer["properties"]["records"]["items"]["properties"]) == answer_fields
        assert {"400", "401", "413", "422", "429", "500"} <= set(operation["responses"])
