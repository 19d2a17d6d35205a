"""``POST /privatize/stream``: NDJSON in, NDJSON out, for batches larger than one request may be.

Each line of the body is a record (``{"id": ..., "text": ...}``, an id on every line or on none); what a JSON body
names beside its records goes in the query string instead (``entities=direct,LOC``, ``threshold=0.2``,
``operators=PERSON:hash,DATE:placeholder``). The body is taken in whole first (:func:`spool`: in memory up to
:data:`SPOOL_IN_MEMORY`, then in an unnamed temporary file closed when the answer ends; at most the server's stream
limit, and at most :data:`STREAMS_AT_ONCE` streams at a time), so a client needs not read while it sends (most HTTP
clients cannot, and a server answering before the body is in would wait on a full socket forever). Its lines are
then privatized in chunks of at most ``max_records`` records and ``max_bytes`` bytes (what one ``/privatize``
request may hold), each chunk's answers written out before the next is read (:func:`answers`). A line over
``max_bytes``, a record refused, the rate limit reached or a failed model call ends the stream with a last line
``{"error": ..., "answered": n}``: the ``n`` records before it stand, and the status, sent with the first line, stays
200 (the audit line says how the stream ended). Errors name a record by its position, never its text.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any

OVERSIZED = object()  # what :func:`body_lines` yields for a line over the limit (and then stops)
SPOOL_IN_MEMORY = 8 << 20  # bytes of a stream's body held in memory before the rest goes to a temporary file
STREAM_MAX_BYTES = 256 << 20  # the largest stream body a server takes by default
STREAMS_AT_ONCE = 2  # streams a server spools and answers at a time (each may hold a body of up to the limit)
_PIECE = 1 << 16


async def spool(chunks: AsyncIterator[bytes], limit: int) -> IO[bytes] | None:
    """The whole body, rewound, in memory or an unnamed temporary file (gone when closed); None, with nothing kept,
    when it is over ``limit`` bytes."""
    held = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, prefix="textsift-stream-")  # noqa: SIM115
    size = 0
    try:
        async for piece in chunks:
            size += len(piece)
            if size > limit:
                held.close()
                return None
            held.write(piece)
    except BaseException:
        held.close()
        raise
    held.seek(0)
    return held


async def spooled(held: IO[bytes]) -> AsyncIterator[bytes]:
    """A spooled body in pieces, handing the event loop back after each (a body of blank lines must not hold it)."""
    while piece := held.read(_PIECE):
        yield piece
        await asyncio.sleep(0)


async def body_lines(chunks: AsyncIterator[bytes], max_bytes: int) -> AsyncIterator[Any]:
    """The body's non-blank lines (bytes, without their newline) as they arrive; :data:`OVERSIZED`, and nothing
    after it, for a line over ``max_bytes`` (held no longer than that)."""
    pending = bytearray()
    async for piece in chunks:
        pending += piece
        while (cut := pending.find(b"\n")) >= 0:
            line = bytes(pending[:cut]).rstrip(b"\r")
            del pending[:cut + 1]
            if len(line) > max_bytes:
                yield OVERSIZED
                return
            if line.strip():
                yield line
        if len(pending) > max_bytes:
            yield OVERSIZED
            return
    if pending.strip():
        yield bytes(pending)


def query_options(query: Mapping[str, str]) -> dict[str, Any]:
    """The query string's options in the shape of a JSON body's fields (``entities`` a list, ``threshold`` a number,
    ``operators`` an object), for the body's own validation; a value that does not read is passed on as it is, so
    that validation refuses it."""
    options: dict[str, Any] = {}
    if "entities" in query:
        options["entities"] = [part.strip() for part in query["entities"].split(",")]
    if "threshold" in query:
        try:
            options["threshold"] = float(query["threshold"])
        except ValueError:
            options["threshold"] = query["threshold"]
    if "operators" in query:
        pairs = [part.split(":", 1) for part in query["operators"].split(",")]
        options["operators"] = ({label.strip(): op.strip() for label, op in pairs}
                                if all(len(pair) == 2 for pair in pairs) else query["operators"])
    return options


def unknown_option(query: Mapping[str, str]) -> bool:
    """Whether the query string names anything but the options (refused, never ignored)."""
    return any(name not in ("entities", "threshold", "operators") for name in query)


@dataclass
class Outcome:
    """How a stream went: records answered, and the status its end would have had as a request (200: all of them;
    else the error's, for the audit log)."""

    answered: int = 0
    status: int = 200


@dataclass(frozen=True)
class Reading:
    """How a stream's lines become chunks of records: ``parse`` (a line's JSON, None when it is not JSON),
    ``problem`` (what is wrong with a record, None: nothing), ``who`` (a record as an error names it, from its
    position) and the most records and bytes a chunk holds."""

    parse: Callable[[bytes], Any]
    problem: Callable[[Any], str | None]
    who: Callable[[int, Any], str]
    max_records: int
    max_bytes: int


# a chunk of records -> its NDJSON answer lines, or the error that ends the stream and its status
Answer = Callable[[list[dict[str, Any]]], Awaitable[tuple[bytes, str | None, int]]]


async def answers(lines: AsyncIterator[Any], reading: Reading, answer: Answer, outcome: Outcome
                  ) -> AsyncIterator[bytes]:
    """The NDJSON answers to a stream's ``lines`` (from :func:`body_lines`), a chunk at a time, each answered and
    written before the next is read; the first record refused, or a chunk's error, ends the stream with an error
    line. ``outcome`` follows along."""
    chunk: list[dict[str, Any]] = []
    size, with_ids, error = 0, None, None
    async for line in lines:
        record = None if line is OVERSIZED else reading.parse(line)
        found = (f"is over {reading.max_bytes} bytes" if line is OVERSIZED else "is not JSON" if record is None
                 else reading.problem(record))
        if found is None:
            with_ids = ("id" in record) if with_ids is None else with_ids
            found = None if ("id" in record) == with_ids else "give every record an \"id\", or none"
        if found is not None:
            error, outcome.status = f"{reading.who(outcome.answered + len(chunk), record)}: {found}", 422
            break
        chunk.append(record)
        size += len(line)
        if len(chunk) == reading.max_records or size >= reading.max_bytes:
            out, error, outcome.status = await answer(chunk)
            yield out
            outcome.answered, chunk, size = outcome.answered + (0 if error else len(chunk)), [], 0
            if error is not None:
                break
    if error is None and chunk:
        out, error, outcome.status = await answer(chunk)
        yield out
        outcome.answered += 0 if error else len(chunk)
    if error is not None:
        yield (json.dumps({"error": error, "answered": outcome.answered}) + "\n").encode()
