"""``textsift serve``: the registered privatizer over HTTP, with the CLI's error contract.

``POST /privatize`` takes ``{"records": [{"id": ..., "text": ...}, ...]}`` (``id`` optional: without it a
document is keyed by a digest of its text) and answers ``{"records": [{"id", "text"[, "epsilon"]}]}`` in the
same order. ``POST /analyze`` takes the same records and answers ``{"records": [{"id", "entities": [{"start", "end",
"type"}]}]}``: what the served setting protects in each text, offsets into the text as sent, no scores
(:meth:`textsift.serving.model.PrivatizerModel.analyze`). Either body may name ``"entities"`` (types and groups,
e.g. ``["direct", "LOC"]``): the types to protect instead of the setting's own, which they must include
(:meth:`~textsift.serving.model.PrivatizerModel.setting_for`: a request may protect more, never less than what was
judged), and ``"threshold"`` (a number in [0.02, 1], taken down to a coarse grid so that requests cannot measure a
span's confidence): no type detected at a higher confidence threshold than that or its served one (likewise: it may
find more, never less). A ``/privatize`` body may name ``"operators"`` (entity type -> ``placeholder``, ``hash``,
``pseudonym`` or ``mask``): what replaces that type, as long as it reveals no more than the setting's own
(``Mechanism.with_operators``). ``POST /privatize/stream`` takes NDJSON records beyond one request's limits and
answers NDJSON, a chunk at a time (:mod:`textsift.serving.streaming`). Requests that arrive while the model is busy
are privatized together in one call
(:mod:`textsift.serving.batching`: the same output as one by one). Every request needs ``Authorization: Bearer
<token>``. A body over ``max_bytes`` is refused (413) before it is parsed, more than ``max_records`` records
too (413); a body that is not such JSON gets 400, a field the service does not read (in the body or a record)
422 rather than being ignored, an unknown entity type 422, a record without text, with text or an id
that is not valid Unicode (a lone surrogate, sent as a JSON escape) or an integer id of more digits than Python
converts 422, and any fault of the server 500 (its error class only) — each error is JSON, names the problem
(and, for a record, its position and id), never the text, and is counted in ``/metrics``.
Model calls run one at a time off the event loop, so ``/health`` and ``/metrics`` answer during a long one.
``GET /openapi.json`` describes both routes (:mod:`textsift.serving.api_schema`; no token needed, no browser page: it
would load its scripts from a CDN). ``GET /health`` says which setting is served and with which key (its
fingerprint); ``GET /metrics`` gives
request, document, model-call and error counts and the time spent, in the Prometheus text format. A token may have
at most ``rate_limit`` records privatized per minute (429 with ``Retry-After`` beyond), and every request is a line
of the audit log — counts, never text (:mod:`textsift.serving.guard`). Each answer is a fresh draw
(:mod:`textsift.serving.model`): the service cannot be made to repeat a published release.
"""

from __future__ import annotations

import hmac
import json
import re
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pandas as pd
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from textsift.detection.types import ENTITY_TYPES, IDENTIFIER_GROUPS
from textsift.errors import InputError
from textsift.serving.api_schema import AnalyzeAnswer, PrivatizeAnswer, operation
from textsift.serving.batching import Batcher
from textsift.serving.guard import AuditLog, RateLimit
from textsift.serving.model import ENTITIES, OPERATORS, REQUEST_THRESHOLDS, THRESHOLD, row_ids
from textsift.serving.streaming import (
    STREAM_MAX_BYTES,
    STREAMS_AT_ONCE,
    Outcome,
    Reading,
    answers,
    body_lines,
    query_options,
    spool,
    spooled,
    unknown_option,
)

MAX_BYTES = 1_000_000
MAX_RECORDS = 1_000
RATE_LIMIT = 60_000  # records per token per minute
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate: valid JSON (an escape), not encodable UTF-8
_IDENTIFIER = re.compile(r"[A-Za-z0-9._:\-]{1,64}")  # an id named in an error as it is (anything else could be text)
RECORD_FIELDS = ("id", "text")
BODY_FIELDS = ("records", "entities", "threshold", "operators")
OPTIONAL_COLUMNS = frozenset({"entities", "threshold", "operators"})  # what a request may add to the model's input


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _Counters:
    """What ``/metrics`` reports: requests by status, documents privatized, seconds spent privatizing."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: Counter[int] = Counter()
        self.documents = 0
        self.seconds = 0.0

    def prometheus(self, calls: int) -> str:
        with self.lock:
            lines = ["# TYPE textsift_requests_total counter"]
            lines += [f'textsift_requests_total{{status="{code}"}} {n}' for code, n in sorted(self.requests.items())]
            lines += ["# TYPE textsift_documents_total counter", f"textsift_documents_total {self.documents}",
                      "# TYPE textsift_privatize_seconds_total counter",
                      f"textsift_privatize_seconds_total {self.seconds:.6f}",
                      "# TYPE textsift_model_calls_total counter", f"textsift_model_calls_total {calls}"]
        return "\n".join(lines) + "\n"


class _Streams:
    """How many streams are being spooled or answered: at most ``STREAMS_AT_ONCE`` (each may hold a large body)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0

    def enter(self) -> bool:
        """Take a place for one more stream; False when they are all taken."""
        with self.lock:
            if self.open >= STREAMS_AT_ONCE:
                return False
            self.open += 1
            return True

    def leave(self) -> None:
        """Give a stream's place back."""
        with self.lock:
            self.open -= 1


class _LongInteger:
    """An integer of the body with more digits than ``int()`` converts (parsing it raises ValueError): kept as its
    digit count, so the record that holds it gets a 422 rather than the body a 500."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))


def _integer(digits: str) -> int | _LongInteger:
    try:
        return int(digits)
    except ValueError:
        return _LongInteger(digits)


def _who(position: int, record: Any) -> str:
    """A record in an error: its position, and its id when that is a short clean string or an integer."""
    doc_id = record.get("id") if isinstance(record, dict) else None
    if (isinstance(doc_id, int) and not isinstance(doc_id, bool) and doc_id.bit_length() < 64) or (
            isinstance(doc_id, str) and _IDENTIFIER.fullmatch(doc_id)):
        return f"record {position} (id {doc_id!r})"
    return f"record {position}"


def _unknown(fields: Any, known: tuple[str, ...]) -> str | None:
    """The first field of ``fields`` that is not ``known``, named when it is a short identifier (anything else
    could be text); None when every field is known."""
    extra = [f for f in fields if f not in known]
    if not extra:
        return None
    name = extra[0]
    return f"\"{name}\"" if isinstance(name, str) and _IDENTIFIER.fullmatch(name) else "a field"


def _problem(record: Any) -> str | None:
    """What is wrong with one record (None: nothing), in words that hold none of its text."""
    if not isinstance(record, dict) or not isinstance(record.get("text"), str) or not record["text"].strip():
        return "needs a non-empty string \"text\""
    unknown = _unknown(record, RECORD_FIELDS)
    if unknown is not None:  # a field this service does not read (entity types, operators) is refused, not ignored
        return f"{unknown} is not a record field (a record has \"text\" and an optional \"id\")"
    if _SURROGATE.search(record["text"]):
        return "\"text\" is not valid Unicode (a lone surrogate escape, \\ud800-\\udfff)"
    doc_id = record.get("id")
    if isinstance(doc_id, _LongInteger):
        return f"\"id\" is an integer of {doc_id.digits} digits; send a long id as a string"
    if "id" in record and (not isinstance(doc_id, str | int) or isinstance(doc_id, bool)):
        return "\"id\" must be a string or an integer"
    if isinstance(doc_id, str) and _SURROGATE.search(doc_id):
        return "\"id\" is not valid Unicode (a lone surrogate escape, \\ud800-\\udfff)"
    return None


def _entities(payload: dict[str, Any]) -> str | None | JSONResponse:
    """The body's ``entities`` (entity types and groups), comma-joined; None when it has none; or the error."""
    if "entities" not in payload:
        return None
    asked = payload["entities"]
    if not isinstance(asked, list) or not asked or not all(isinstance(a, str) for a in asked):
        return _error(422, "\"entities\" must be a non-empty list of entity types or groups")
    known = (*ENTITY_TYPES, *IDENTIFIER_GROUPS)
    unknown = next((position for position, name in enumerate(asked) if name not in known), None)
    if unknown is not None:  # named by position: a value ("555-0100", a surname) could be text
        return _error(422, f"\"entities\"[{unknown}] is not an entity type: the types are "
                           f"{', '.join(ENTITY_TYPES)} and the groups {', '.join(IDENTIFIER_GROUPS)}")
    return ",".join(asked)


def _threshold(payload: dict[str, Any]) -> float | None | JSONResponse:
    """The body's ``threshold`` (a number in [0.02, 1]); None when it has none; or the error."""
    if "threshold" not in payload:
        return None
    value = payload["threshold"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not REQUEST_THRESHOLDS[0] <= value <= 1:
        return _error(422, f"\"threshold\" must be a number in [{REQUEST_THRESHOLDS[0]}, 1]: no type is detected at "
                           "a higher confidence threshold than this (taken down to one of "
                           f"{', '.join(map(str, REQUEST_THRESHOLDS))}) or the served one")
    return float(value)


def _operators(payload: dict[str, Any]) -> str | None | JSONResponse:
    """The body's ``operators`` (entity type -> operator name) as a JSON object; None when it has none; or the
    error. Which operators a type may take is the model's to say (the served setting's own bound them)."""
    if "operators" not in payload:
        return None
    asked = payload["operators"]
    if not isinstance(asked, dict) or not asked or not all(isinstance(v, str) for v in asked.values()):
        return _error(422, "\"operators\" must be a non-empty object of entity type -> operator, e.g. "
                           "{\"PERSON\": \"placeholder\"}")
    if any(label not in ENTITY_TYPES for label in asked):  # a key that is no type is not named: it could be text
        return _error(422, f"an \"operators\" key is not an entity type: the types are {', '.join(ENTITY_TYPES)}")
    return json.dumps(asked, sort_keys=True)


def _records(body: bytes, max_records: int) -> tuple[list[dict[str, Any]], dict[str, Any]] | JSONResponse:
    """The request's records and its optional columns (``entities`` comma-joined, ``threshold``, ``operators`` as
    JSON; absent when the body names none), or the error response that says what is wrong with them (never their
    text)."""
    try:
        payload = json.loads(body, parse_int=_integer)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _error(400, "the body is not JSON: send {\"records\": [{\"id\": ..., \"text\": ...}]}")
    records = payload.get("records") if isinstance(payload, dict) else None
    if not isinstance(records, list) or not records:
        return _error(400, "the body needs a non-empty list \"records\"")
    unknown = _unknown(payload, BODY_FIELDS)
    if unknown is not None:
        return _error(422, f"{unknown} is not a field of the body (it has \"records\" and optional \"entities\", "
                           "\"threshold\" and \"operators\")")
    if len(records) > max_records:
        return _error(413, f"{len(records)} records in one request; at most {max_records}")
    for position, record in enumerate(records):
        problem = _problem(record)
        if problem is not None:
            return _error(422, f"{_who(position, record)}: {problem}")
    columns = _options(payload)
    return columns if isinstance(columns, JSONResponse) else (records, columns)


def _frame(records: list[dict[str, Any]], columns: dict[str, Any]) -> pd.DataFrame:
    """The model's input for ``records`` (an id on each or on none) and a request's optional ``columns``."""
    frame = pd.DataFrame({"text": [r["text"] for r in records]})
    frame.insert(0, "id", [str(r["id"]) for r in records] if "id" in records[0] else row_ids(frame))
    for name, value in columns.items():
        frame[name] = value
    return frame


def _declared_over(request: Request, limit: int) -> bool:
    """Whether the request declares a body over ``limit`` bytes (or a length that is not a number)."""
    declared = request.headers.get("content-length")
    return declared is not None and (not declared.isdigit() or int(declared) > limit)


def _refused(columns: dict[str, Any], takes: frozenset[str]) -> JSONResponse | None:
    """The 422 for an optional column the served version cannot read (MLflow would drop it silently), or None."""
    refused = sorted(set(columns) - takes)
    if not refused:
        return None
    return _error(422, f"this privatizer version takes no \"{refused[0]}\" (registered before requests could name "
                       "it): promote a version from a newer run")


def _line_record(line: bytes) -> Any:
    """One NDJSON line as JSON, None when it is not JSON."""
    try:
        return json.loads(line, parse_int=_integer)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None


def _options(payload: dict[str, Any]) -> dict[str, Any] | JSONResponse:
    """The model's optional columns a request names (``entities`` comma-joined, ``threshold``, ``operators`` as
    JSON; absent when it names none), or the error response that says what is wrong with one."""
    columns: dict[str, Any] = {}
    for name, value in (("entities", _entities(payload)), ("threshold", _threshold(payload)),
                        ("operators", _operators(payload))):
        if isinstance(value, JSONResponse):
            return value
        if value is not None:
            columns[name] = value
    return columns


def create_app(model: Any, token: str, setting: str, fingerprint: str, max_bytes: int = MAX_BYTES,
               max_records: int = MAX_RECORDS, rate_limit: int = RATE_LIMIT, audit: Path | None = None,
               analyzer: Callable[[list[str], list[str] | None, float | None], list[list[Any]]] | None = None,
               takes: frozenset[str] = OPTIONAL_COLUMNS, max_stream_bytes: int = STREAM_MAX_BYTES) -> FastAPI:
    """The HTTP app around a loaded privatizer (``model.predict(frame)``, :mod:`textsift.serving.model`); at most
    ``rate_limit`` records per token per minute (0: unlimited), one line per request in the ``audit`` file.
    ``analyzer`` (the model's ``analyze``: texts -> spans with ``start``, ``end``, ``label``) answers
    ``POST /analyze``; without one that route says the service does not analyze. ``takes``: the optional request
    fields the model reads (``entities``, ``threshold``: a version registered before one was declared in its signature
    would have it dropped by MLflow, silently: such a request is refused instead)."""
    if len(token) < 16:
        raise ValueError("the serving token must have at least 16 characters")
    app = FastAPI(title="textsift privatizer", docs_url=None, redoc_url=None, openapi_url="/openapi.json")
    counters = _Counters()
    expected = f"Bearer {token}".encode()
    batcher = Batcher(model.predict, max_records)
    limit, log = RateLimit(rate_limit), AuditLog(audit)

    def finish(response: Any, records: int = 0, started: float | None = None, authorised: bool = True) -> Any:
        with counters.lock:
            counters.requests[response.status_code] += 1
        log.record(token if authorised else None, response.status_code, records,
                   time.perf_counter() - started if started is not None else 0.0)
        return response

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok", "setting": setting, "key_fingerprint": fingerprint}

    @app.get("/metrics")
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(counters.prometheus(batcher.calls))

    async def privatized(frame: pd.DataFrame) -> pd.DataFrame:
        return await batcher.submit(frame)  # joined with the requests that queued meanwhile

    async def analyzed(frame: pd.DataFrame) -> list[dict[str, Any]]:
        assert analyzer is not None
        if OPERATORS in frame:
            raise InputError(f"\"{OPERATORS}\" apply to /privatize: /analyze replaces nothing")
        entities = frame[ENTITIES].iloc[0].split(",") if ENTITIES in frame else None
        threshold = float(frame[THRESHOLD].iloc[0]) if THRESHOLD in frame else None
        found = await run_in_threadpool(analyzer, frame["text"].tolist(), entities, threshold)
        return [{"id": doc_id, "entities": [{"start": s.start, "end": s.end, "type": s.label} for s in spans]}
                for doc_id, spans in zip(frame["id"], found, strict=True)]

    over_rate = f"over the rate limit of {rate_limit} records per minute for this token"

    async def answered(records: list[dict[str, Any]], columns: dict[str, Any],
                       run: Callable[[pd.DataFrame], Awaitable[Any]]) -> tuple[Any, tuple[int, str] | None]:
        """``records`` run through the model (off the event loop: health and metrics answer meanwhile) and counted
        in /metrics: their rows, or None and the status and message of the failure (422 refused, 500 a fault)."""
        started = time.perf_counter()
        try:
            out = await run(_frame(records, columns))
        except InputError as err:
            return None, (422, f"{type(err).__name__}: {err}")
        except Exception as err:  # noqa: BLE001 - a server fault: its class only, never a message that could hold text
            return None, (500, f"the privatizer failed ({type(err).__name__})")
        with counters.lock:
            counters.documents += len(records)
            counters.seconds += time.perf_counter() - started
        return (out.to_dict(orient="records") if isinstance(out, pd.DataFrame) else out), None

    async def answer(request: Request, run: Callable[[pd.DataFrame], Awaitable[Any]]) -> Any:
        if not hmac.compare_digest(request.headers.get("authorization", "").encode(), expected):
            return finish(_error(401, "missing or wrong bearer token"), authorised=False)
        if _declared_over(request, max_bytes):
            return finish(_error(413, f"the body is over {max_bytes} bytes"))
        body = bytearray()
        async for piece in request.stream():
            body += piece
            if len(body) > max_bytes:
                return finish(_error(413, f"the body is over {max_bytes} bytes"))
        try:
            parsed = _records(bytes(body), max_records)
        except RecursionError:
            return finish(_error(400, "the body nests too deeply"))
        if isinstance(parsed, JSONResponse):
            return finish(parsed)
        records, columns = parsed
        refused = _refused(columns, takes)
        if refused is not None:
            return finish(refused)
        if any("id" in r for r in records) and not all("id" in r for r in records):
            return finish(_error(422, "give every record an \"id\", or none"))
        wait = limit.take(token, len(records))
        if wait:
            response = _error(429, over_rate)
            if wait != float("inf"):
                response.headers["Retry-After"] = str(max(1, int(wait + 0.999)))
            return finish(response, len(records))
        started = time.perf_counter()
        rows, failure = await answered(records, columns, run)
        if failure is not None:
            return finish(_error(*failure), len(records), started)
        return finish(JSONResponse({"records": rows}), len(records), started)

    @app.post("/privatize", openapi_extra=operation(PrivatizeAnswer), summary="privatize each record's text")
    async def privatize(request: Request) -> Any:
        try:
            return await answer(request, privatized)
        except Exception as err:  # noqa: BLE001 - any other fault: JSON, counted, its class only (never its message)
            return finish(_error(500, f"the server failed ({type(err).__name__})"))

    streams = _Streams()

    async def stream_chunk(records: list[dict[str, Any]], columns: dict[str, Any]) -> tuple[bytes, str | None, int]:
        """One chunk of a stream answered: its NDJSON lines, or the error that ends the stream and its status."""
        if limit.take(token, len(records)):
            return b"", over_rate, 429
        rows, failure = await answered(records, columns, privatized)
        if failure is not None:
            return b"", failure[1], failure[0]
        try:
            lines = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
        except ValueError as err:  # a value JSON cannot hold: the server's fault
            return b"", f"the privatizer failed ({type(err).__name__})", 500
        return lines.encode(), None, 200

    async def stream(request: Request) -> Any:
        if _declared_over(request, max_stream_bytes):
            return finish(_error(413, f"the stream is over {max_stream_bytes} bytes"))
        if unknown_option(request.query_params):
            return finish(_error(422, "the query string takes entities, threshold and operators only"))
        columns = _options(query_options(request.query_params))
        if isinstance(columns, JSONResponse):
            return finish(columns)
        refused = _refused(columns, takes)
        if refused is not None:
            return finish(refused)
        if not streams.enter():
            response = _error(503, f"{STREAMS_AT_ONCE} streams are being answered: try again shortly")
            response.headers["Retry-After"] = "5"
            return finish(response)
        started, outcome, held = time.perf_counter(), Outcome(), None
        try:
            held = await spool(request.stream(), max_stream_bytes)
        finally:
            if held is None:
                streams.leave()
        if held is None:
            return finish(_error(413, f"the stream is over {max_stream_bytes} bytes"))

        def done() -> None:  # after the last line, a disconnect or a failure: once
            if held is not None and not held.closed:
                held.close()
                streams.leave()
                log.record(token, outcome.status, outcome.answered, time.perf_counter() - started)

        reading = Reading(_line_record, _problem, _who, max_records, max_bytes)

        async def body() -> AsyncIterator[bytes]:
            try:
                async for piece in answers(body_lines(spooled(held), max_bytes), reading,
                                           lambda chunk: stream_chunk(chunk, columns), outcome):
                    yield piece
            finally:
                done()

        with counters.lock:
            counters.requests[200] += 1
        return StreamingResponse(body(), media_type="application/x-ndjson", background=BackgroundTask(done))

    @app.post("/privatize/stream", summary="privatize NDJSON records as they arrive, answering NDJSON")
    async def privatize_stream(request: Request) -> Any:
        if not hmac.compare_digest(request.headers.get("authorization", "").encode(), expected):
            return finish(_error(401, "missing or wrong bearer token"), authorised=False)
        try:
            return await stream(request)
        except Exception as err:  # noqa: BLE001 - any other fault: JSON, counted, its class only (never its message)
            return finish(_error(500, f"the server failed ({type(err).__name__})"))

    @app.post("/analyze", openapi_extra=operation(AnalyzeAnswer), summary="what /privatize would replace")
    async def analyze(request: Request) -> Any:
        if analyzer is None:
            return finish(_error(404, "this service does not analyze: it serves /privatize only"))
        try:
            return await answer(request, analyzed)
        except Exception as err:  # noqa: BLE001 - any other fault: JSON, counted, its class only (never its message)
            return finish(_error(500, f"the server failed ({type(err).__name__})"))

    return app
