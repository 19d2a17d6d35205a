"""``POST /privatize/stream``: NDJSON in, NDJSON out, for batches larger than one request may be.

Each line of the body is a record (``{"id": ..., "text": ...}``, an id on every line or on none); what a JSON body
names beside its records goes in the query string instead (``entities=direct,LOC``, ``threshold=0.2``,
``operators=PERSON:hash,DATE:placeholder``). The body is taken in whole first (:func:`spool`: in memory up to
:data:`SPOOL_IN_MEMORY`, then in a temporary file removed when the answer ends; at most the server's stream limit),
so a client needs not read while it sends (most HTTP clients cannot, and a server answering before the body is in
would wait on a full socket forever). Its lines are then privatized ``max_records`` at a time, each chunk's answers
written out before the next chunk is read. A line over ``max_bytes``, a record refused, the rate limit reached or a
failed model call ends the stream with a last line ``{"error": ..., "answered": n}``: the ``n`` records before it
stand, and the status, sent with the first line, stays 200. Errors name a record by its position, never its text.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Mapping
from typing import IO, Any

OVERSIZED = object()  # what :func:`body_lines` yields for a line over the limit (and then stops)
SPOOL_IN_MEMORY = 8 << 20  # bytes of a stream's body held in memory before the rest goes to a temporary file
STREAM_MAX_BYTES = 256 << 20  # the largest stream body a server takes by default
_PIECE = 1 << 16


async def spool(chunks: AsyncIterator[bytes], limit: int) -> IO[bytes] | None:
    """The whole body, rewound, in memory or a temporary file (deleted when closed); None, with nothing kept, when it
    is over ``limit`` bytes."""
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
    """A spooled body in pieces, closed (its temporary file deleted) when read or abandoned."""
    try:
        while piece := held.read(_PIECE):
            yield piece
    finally:
        held.close()


async def body_lines(chunks: AsyncIterator[bytes], max_bytes: int) -> AsyncIterator[Any]:
    """The body's non-blank lines (bytes, without their newline) as they arrive; :data:`OVERSIZED`, and nothing
    after it, for a line over ``max_bytes`` (held no longer than that)."""
    pending = bytearray()
    async for piece in chunks:
        pending += piece
        while (cut := pending.find(b"\n")) >= 0:
            line = bytes(pending[:cut])
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
