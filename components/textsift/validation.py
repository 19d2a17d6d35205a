"""Record-level validation of ingest: accept clean records, reject bad ones by id and reason.

Reasons (also the keys of the ``rejected.*`` ingest metrics):
``non_utf8``, ``malformed``, ``unclosed_quote``, ``bad_type``, ``missing_id``, ``bad_spans``
(set by the readers), ``empty``, ``too_long``, ``missing_label``, ``duplicate_id``,
``duplicate_text`` and ``bad_interest`` (a known interest that is neither ``none`` nor one of the
IPI model's categories: the attacker could never be scored against it).

A clean record keeps its text and gold spans exactly as given (``ingest.normalize.output`` false, the
default): outputs then differ from the input only inside replaced spans. Emptiness and duplicates are
judged on the normalized form (``textsift.normalize.normalized_form``), so two records that differ only
in spacing or markup are one text.

Error and log messages built here name record ids through ``short_id``: an id comes from the
input file and may be long or hold document text (a wrong ``id_field``), so it is cut short
(:mod:`textsift.record_ids`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from textsift.corpus import RawRecord, Rejects, Span
from textsift.errors import InputError
from textsift.ingest_params import IngestParams
from textsift.interests.synthetic import interest_categories
from textsift.normalize import normalize_text, normalized_form
from textsift.record_ids import short_id

log = logging.getLogger("textsift")

REASONS = (
    "non_utf8", "malformed", "unclosed_quote", "bad_type", "missing_id", "bad_spans", "empty", "too_long",
    "missing_label", "duplicate_id", "duplicate_text", "bad_interest",
)
NO_LABEL = ""
"""The label of every record read without a label column (``label_field`` none): one class."""
PROGRESS_EVERY = 100_000


def first_ids(rejects: Rejects, n: int = 10) -> str:
    """The ids of the first ``n`` rejects, shortened, comma-separated (for error messages)."""
    return ", ".join(short_id(row["doc_id"]) for row in rejects.rows[:n])


@dataclass(frozen=True)
class CleanRecord:
    doc_id: str
    text: str
    label: str
    spans: tuple[Span, ...]
    given_split: str | None
    interest: str | None = None


def _problem(record: RawRecord, params: IngestParams, require_label: bool
             ) -> tuple[str | None, CleanRecord | None, str]:
    """Why the record is rejected (None: it is clean), the clean record, and its normalized form (dedupe's key)."""
    if record.problem:
        return record.problem, None, ""
    text = record.text or ""
    if not text.strip():
        return "empty", None, ""
    if len(text) > params.max_chars:
        return "too_long", None, ""
    form = normalized_form(text, params.normalize)
    if not form:  # markup only
        return "empty", None, form
    label = (record.label or "").strip()
    if require_label and not label:
        return "missing_label", None, form
    if not all(0 <= s.start < s.end <= len(text) for s in record.spans):
        return "bad_spans", None, form
    interest = (record.interest or "").strip().lower() or None
    if interest is not None and interest not in interest_categories():
        return "bad_interest", None, form
    spans = record.spans
    if params.normalize.output:
        text, spans = normalize_text(text, spans, params.normalize)
    clean = CleanRecord(record.doc_id, text, label if require_label else NO_LABEL, spans, record.split, interest)
    return None, clean, form


class Validator:
    """Record-level validation as a stream: ``accept`` one record at a time, keeping only what later records
    are checked against (the ids and digests of the normalized forms seen), the rejects and the count.

    The first occurrence of an id (or, with ``dedupe``, of a normalized text) wins; later ones are rejected,
    so the result depends on nothing but input order — two passes over the same file agree record for record.
    """

    def __init__(self, params: IngestParams, require_label: bool = True) -> None:
        self.params, self.require_label = params, require_label
        self.rejects = Rejects()
        self.total = self.accepted = 0
        self._seen_ids: set[str] = set()
        self._seen_texts: set[bytes] = set()

    def accept(self, record: RawRecord) -> CleanRecord | None:
        """The clean record (its text as given, or normalized with ``normalize.output``) when it is clean and new,
        else None (it is added to ``rejects``)."""
        self.total += 1
        reason, clean, form = _problem(record, self.params, self.require_label)
        if reason is None and clean is not None:
            digest = hashlib.blake2b(form.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if clean.doc_id in self._seen_ids:
                reason = "duplicate_id"
            elif self.params.dedupe and digest in self._seen_texts:
                reason = "duplicate_text"
            else:
                self._seen_ids.add(clean.doc_id)
                if self.params.dedupe:
                    self._seen_texts.add(digest)
                self.accepted += 1
                return clean
        self.rejects.add(record, reason or "malformed")
        return None

    def stream(self, records: Iterable[RawRecord], progress_every: int = PROGRESS_EVERY) -> Iterator[CleanRecord]:
        """The clean records of ``records`` in input order; logs counts every ``progress_every`` records."""
        started = time.perf_counter()
        for record in records:
            if self.total and self.total % progress_every == 0:
                log.info("validated %d records: %d accepted, %d rejected (%.1fs)", self.total, self.accepted,
                         len(self.rejects.rows), time.perf_counter() - started)
            clean = self.accept(record)
            if clean is not None:
                yield clean
        log.info("read and validated %d records: %d accepted, %d rejected %s (%.1fs)", self.total, self.accepted,
                 len(self.rejects.rows), self.rejects.counts(), time.perf_counter() - started)


def validate_records(
    records: Iterable[RawRecord], params: IngestParams, require_label: bool = True,
    progress_every: int = PROGRESS_EVERY,
) -> tuple[list[CleanRecord], Rejects, int]:
    """Split a record stream into clean records and rejects; also return the number seen (:class:`Validator`).

    Args:
        records: the reader's records, in input order.
        params: ingest params (``max_chars``, ``normalize``, ``dedupe``).
        require_label: when False (input without a label column) every clean record gets the
            label ``NO_LABEL`` and none is rejected as ``missing_label``.
        progress_every: log counts and elapsed time every this many records (long inputs).
    """
    validator = Validator(params, require_label)
    accepted = list(validator.stream(records, progress_every))
    return accepted, validator.rejects, validator.total


def check_usable(name: str, rejects: Rejects, total: int, accepted: int, where: object = None) -> None:
    """InputError when a file gave no usable record; else a warning with the rejects' counts and first ids.
    ``where``: the rejects file, named in both."""
    see = f"; see {where}" if where is not None else ""
    if total == 0 or not accepted:
        raise InputError(f"{name}: no usable records ({total} read; rejected by reason: {rejects.counts()}; "
                         f"first ids: {first_ids(rejects) or 'none'}{see})")
    if rejects.rows:
        log.warning("%s: %d of %d records rejected %s; first ids: %s%s", name, len(rejects.rows), total,
                    rejects.counts(), first_ids(rejects), see)


def check_reject_fraction(rejects: Rejects, total: int, max_fraction: float, rejects_path: str) -> None:
    """Fail like ingest does when more than ``max_fraction`` of ``total`` records were rejected.

    The message gives the counts by reason, the first (shortened) ids and where the rejects
    were written; call it after writing them, so a failing run still shows what was wrong.
    """
    if total == 0:
        raise InputError("the input holds no records")
    counts = rejects.counts()
    rejected, total = sum(counts.values()) + rejects.swallowed, total + rejects.swallowed
    fraction = rejected / total
    if fraction > max_fraction:
        swallowed = f" (of them {rejects.swallowed} lines swallowed by an unclosed quote)" if rejects.swallowed else ""
        raise InputError(
            f"{rejected} of {total} records rejected{swallowed} ({fraction:.1%} > "
            f"ingest.max_reject_fraction={max_fraction:.1%}); by reason: {counts}; "
            f"first ids: {first_ids(rejects)}; see {rejects_path}"
        )
