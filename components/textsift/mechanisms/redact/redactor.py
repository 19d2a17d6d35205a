"""Redaction: sensitive spans replaced by placeholders or by consistent, seeded pseudonyms.

What de-identification tools (Presidio's anonymizer) do, on textsift's detected or gold spans,
as one more privacy setting on the frontier. Per document: the spans are made consistent
(``protected_spans.consistent_spans``: every repeat of a marked string or name part), merged
into disjoint regions, and each region replaced. A pseudonym depends only on (key, document
id, the original string) — the key is the project's secret key, so nobody without it can confirm a
guessed name by recomputing its pseudonym — and a string gets one stand-in throughout its document
(``scope: corpus``: throughout the corpus, the document id left out); a bare surname gets the surname
of its full name's pseudonym. Redaction is deterministic de-identification,
not differential privacy: it protects exactly what the spans cover.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import date
from functools import cache

from faker import Faker

from textsift import rng
from textsift.corpus import Span
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.params import RedactSetting
from textsift.tokenize import words

DATE_WINDOW = (date(1940, 1, 1), date(2020, 12, 31))  # where date pseudonyms fall, whatever today is
REDRAWS = 10  # draws of a stand-in before falling back to a placeholder
_FAKER_LOCK = threading.Lock()  # one seeded Faker per process; seeding and drawing must not interleave
FAKES: dict[str, Callable[[Faker], str]] = {
    "PERSON": lambda f: f"{f.first_name()} {f.last_name()}",
    "LOC": lambda f: f.city(),
    "ORG": lambda f: f.company(),
    "JOB": lambda f: f.job(),
    "EDU": lambda f: f"{f.city()} University",
    # a fixed window: Faker's date() draws up to *now*, so the same seed gave another date a day later
    "DATE": lambda f: f.date_between_dates(DATE_WINDOW[0], DATE_WINDOW[1]).strftime("%d %B %Y"),
    "EMAIL": lambda f: f.email(),
    "PHONE": lambda f: f.phone_number(),
    "ID": lambda f: f.bothify("??-#######").upper(),
    "URL": lambda f: f.url(),
}
ALIASES = {"NAME": "PERSON", "CITY": "LOC", "GPE": "LOC", "LOCATION": "LOC", "COMPANY": "ORG", "SCHOOL": "EDU",
           "CODE": "ID"}


@cache
def _faker() -> Faker:
    return Faker("en_US")


def pseudonym_of(label: str, key: rng.Key, owner: str | None, original: str) -> str:
    """The stand-in of ``original`` (type ``label``): Faker seeded by a PRF of (key, owner, the string folded).

    ``owner`` is the document id (``scope: document``) or None (``scope: corpus``). A dictionary attacker
    recomputes this for candidate names; with the secret key they cannot (:mod:`textsift.secret_key`).
    """
    make = FAKES.get(ALIASES.get(label, label))
    if make is None:
        return f"[{label}]"
    name = f"{owner}\x1f{original.casefold()}" if owner is not None else f"\x1e{original.casefold()}"
    with _FAKER_LOCK:
        fake = _faker()
        for attempt in range(REDRAWS):  # a draw that repeats the original (Faker's jobs, common names) would leak it
            fake.seed_instance(rng.stable_key(key, "redact.pseudonym", f"{name}\x1d{attempt}" if attempt else name))
            stand_in = make(fake)
            if not _reveals(original, stand_in, label):
                return stand_in
    return f"[{label}]"


def _reveals(original: str, stand_in: str, label: str) -> bool:
    """Whether a stand-in gives the original away: equal to it, or (a person) sharing a name part with it."""
    if stand_in.casefold() == original.casefold():
        return True
    if ALIASES.get(label, label) != "PERSON":
        return False
    return bool({t.text.casefold() for t in words(original)} & {t.text.casefold() for t in words(stand_in)})


def _like(original: str, fake: str) -> str:
    """The fake value in the original's letter case (``SMITH`` -> ``JONES``)."""
    if original.isupper():
        return fake.upper()
    return fake.lower() if original.islower() else fake


class _Pseudonyms:
    """A document's string -> pseudonym table; name parts map to the parts of their full name's pseudonym."""

    def __init__(self, key: rng.Key, owner: str | None) -> None:
        self.key, self.owner = key, owner
        self.table: dict[str, str] = {}

    def __call__(self, original: str, label: str) -> str:
        key = original.casefold()
        if key not in self.table:
            parts = [t.text.casefold() for t in words(original)]
            if label in ("PERSON", "NAME") and parts and all(p in self.table for p in parts):
                self.table[key] = " ".join(self.table[p] for p in parts)
            else:
                fake = pseudonym_of(label, self.key, self.owner, original)
                self.table[key] = fake
                fake_parts = fake.split()
                if label in ("PERSON", "NAME") and len(parts) == len(fake_parts):
                    for part, stand_in in zip(parts, fake_parts, strict=True):
                        self.table.setdefault(part, stand_in)
        return _like(original, self.table[key])


def redact_text(text: str, spans: Sequence[Span], setting: RedactSetting, key: rng.Key, doc_id: str,
                record: list[tuple[str, str, str]] | None = None) -> tuple[str, int]:
    """One document redacted; returns the text and the number of regions replaced. ``record``, when given,
    receives ``(label, pseudonym, original)`` per replaced region (the pseudonym vault's entries)."""
    regions = outermost(consistent_spans(text, spans))
    pseudonym = _Pseudonyms(key, doc_id if setting.scope == "document" else None)
    for region in sorted(regions, key=lambda r: r.end - r.start, reverse=True):  # full names before bare parts
        if setting.style == "pseudonym":
            pseudonym(text[region.start:region.end], region.label)
    pieces, cursor = [], 0
    for region in regions:
        original = text[region.start:region.end]
        stand_in = (setting.placeholder.format(label=region.label) if setting.style == "placeholder"
                    else pseudonym(original, region.label))
        if record is not None and setting.style == "pseudonym":
            record.append((region.label, stand_in, original))
        pieces += [text[cursor:region.start], stand_in]
        cursor = region.end
    pieces.append(text[cursor:])
    return "".join(pieces), len(regions)


def redact(
    texts: Sequence[str], doc_ids: Sequence[str], spans: Sequence[Sequence[Span]], setting: RedactSetting, key: rng.Key,
    vault: dict[str, list[tuple[str, str, str]]] | None = None, owners: Sequence[str] | None = None,
) -> tuple[list[str], dict[str, float]]:
    """Redact every document (row order kept); metrics: spans given, regions replaced, documents touched.
    ``vault``, when given, receives each document's ``(label, pseudonym, original)`` entries by id. ``owners`` names
    what each document's pseudonyms are keyed by (``Documents.draw_names``: id and text digest); default its id."""
    out, replaced = [], []
    for text, doc_id, owner, doc_spans in zip(texts, doc_ids, owners or doc_ids, spans, strict=True):
        record = vault.setdefault(doc_id, []) if vault is not None else None
        redacted, count = redact_text(text, doc_spans, setting, key, owner, record)
        out.append(redacted)
        replaced.append(count)
    n = max(len(texts), 1)
    return out, {"spans_given": float(sum(len(s) for s in spans)), "regions_replaced": float(sum(replaced)),
                 "docs_redacted_fraction": sum(1 for c in replaced if c) / n}
