"""Record-level validation of ingest: accept clean records, reject bad ones by id and reason.

Reasons (also the keys of the ``rejected.*`` ingest metrics):
``non_utf8``, ``malformed``, ``missing_id``, ``bad_spans`` (set by the readers), ``empty``,
``too_long``, ``missing_label``, ``duplicate_id`` and ``duplicate_text``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from textsift.config import IngestParams
from textsift.corpus import RawRecord, Rejects, Span
from textsift.normalize import normalize_text

REASONS = (
    "non_utf8", "malformed", "missing_id", "bad_spans", "empty", "too_long",
    "missing_label", "duplicate_id", "duplicate_text",
)


@dataclass(frozen=True)
class CleanRecord:
    doc_id: str
    text: str
    label: str
    spans: tuple[Span, ...]
    given_split: str | None


def _problem(record: RawRecord, params: IngestParams) -> tuple[str | None, CleanRecord | None]:
    if record.problem:
        return record.problem, None
    if record.text is None or not record.text.strip():
        return "empty", None
    if len(record.text) > params.max_chars:
        return "too_long", None
    if record.label is None or not record.label.strip():
        return "missing_label", None
    if not all(0 <= s.start < s.end <= len(record.text) for s in record.spans):
        return "bad_spans", None
    text, spans = normalize_text(record.text, record.spans, params.normalize)
    if not text:
        return "empty", None
    clean = CleanRecord(record.doc_id, text, record.label.strip(), spans, record.split)
    return None, clean


def validate_records(
    records: Iterable[RawRecord], params: IngestParams
) -> tuple[list[CleanRecord], Rejects, int]:
    """Split a record stream into clean records and rejects; also return the number seen.

    The first occurrence of an id (or, with ``dedupe``, of a normalized text) wins; later
    ones are rejected, so the result does not depend on anything but input order.
    """
    accepted: list[CleanRecord] = []
    rejects = Rejects()
    seen_ids: set[str] = set()
    seen_texts: set[bytes] = set()
    total = 0
    for record in records:
        total += 1
        reason, clean = _problem(record, params)
        if reason is None and clean is not None:
            digest = hashlib.blake2b(clean.text.encode(), digest_size=16).digest()
            if clean.doc_id in seen_ids:
                reason = "duplicate_id"
            elif params.dedupe and digest in seen_texts:
                reason = "duplicate_text"
            else:
                seen_ids.add(clean.doc_id)
                seen_texts.add(digest)
                accepted.append(clean)
                continue
        rejects.add(record, reason or "malformed")
    return accepted, rejects, total
