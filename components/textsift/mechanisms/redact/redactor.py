"""Redaction: sensitive spans replaced by placeholders or by consistent, seeded pseudonyms.

What de-identification tools (Presidio's anonymizer) do, on textsift's detected or gold spans,
as one more privacy setting on the frontier. Per document: the spans are made consistent
(``protected_spans.consistent_spans``: every repeat of a marked string or name part), merged
into disjoint regions, and each region replaced. A pseudonym depends only on (key, document
id, the original string) — the key is the project's secret key, so nobody without it can confirm a
guessed name by recomputing its pseudonym — and a string gets one stand-in throughout its document
(``scope: corpus``: throughout the corpus, the document id left out), unless that draw holds a name the
document gives another person: it is drawn again, so no stand-in puts a real name of its document back.
Stand-ins fit what they replace: a document's persons keep one stand-in per person in every form and the gender
of their honorifics (:mod:`.persons`), its dates move by one keyed offset in their own formats (:mod:`.dates`),
phone numbers and codes keep their pattern (:mod:`.shapes`), a nationality gets a nationality
(:mod:`.nationalities`).
Redaction is deterministic de-identification, not differential privacy: it protects exactly what the
spans cover.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import date
from functools import cache

from faker import Faker

from textsift import rng
from textsift.corpus import Span
from textsift.detection.types import canonical_type
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.dates import Precision, moved, offset_days
from textsift.mechanisms.redact.nationalities import nationality_form, other_nationalities
from textsift.mechanisms.redact.operators import digest, draw_of, mask, operator_of
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.persons import Gender, People, mention, name_gender, person_name
from textsift.mechanisms.redact.shapes import like_case, same_shape
from textsift.tokenize import words

DATE_WINDOW = (date(1940, 1, 1), date(2020, 12, 31))  # where fake dates fall, whatever today is
REDRAWS = 10  # draws of a stand-in before falling back to a placeholder
_FAKER_LOCK = threading.Lock()  # one seeded Faker per process; seeding and drawing must not interleave
FAKES: dict[str, Callable[[Faker], str]] = {
    "LOC": lambda f: f.city(),
    "ORG": lambda f: f.company(),
    "JOB": lambda f: f.job(),
    "EDU": lambda f: f"{f.city()} University",
    # a fixed window: Faker's date() draws up to *now*, so the same seed gave another date a day later
    "DATE": lambda f: f.date_between_dates(DATE_WINDOW[0], DATE_WINDOW[1]).strftime("%d %B %Y"),
    "EMAIL": lambda f: f.email(),
    "URL": lambda f: f.url(),
}
SHAPED = frozenset({"PHONE", "ID"})  # stand-ins with the original's digits, letters and separators in place
PRECISION: dict[str, Precision] = {"shift": "day", "month": "month", "year": "year"}  # RedactSetting.dates


@cache
def _faker() -> Faker:
    """The process's one en_US Faker, reseeded before every draw."""
    return Faker("en_US")


def _kind(label: str) -> str:
    """The stand-in type of a label (``NAME`` -> ``PERSON``)."""
    return canonical_type(label)


def pseudonym_of(label: str, key: rng.Key, owner: str | None, original: str, gender: Gender | None = None,
                 taken: frozenset[str] = frozenset()) -> str:
    """The stand-in of ``original`` (type ``label``): Faker seeded by a PRF of (key, owner, the string folded).

    ``owner`` is the document id (``scope: document``) or None (``scope: corpus``); ``gender`` that of a person's
    first names (an honorific's; without one, the original first name's); ``taken``: folded name words a person's
    stand-in must not hold (the names of the document's other persons: "Jason Watson" drawn for someone else put
    back the "Jason" the text named). A dictionary attacker recomputes this for candidate names; with the secret
    key they cannot (:mod:`textsift.secret_key`).
    """
    make = _maker(_kind(label), original, gender)
    if make is None:
        return f"[{label}]"
    name = draw_of(owner, original)
    with _FAKER_LOCK:
        fake = _faker()
        for attempt in range(REDRAWS):  # a draw that repeats the original (Faker's jobs, common names) would leak it
            fake.seed_instance(rng.stable_key(key, "redact.pseudonym", f"{name}\x1d{attempt}" if attempt else name))
            stand_in = make(fake)
            if not _reveals(original, stand_in, label, taken):
                return stand_in
    return f"[{label}]"


def _maker(kind: str, original: str, gender: Gender | None) -> Callable[[Faker], str] | None:
    """How a stand-in of ``original`` (of type ``kind``) is drawn from the seeded Faker; None for an unknown type.

    A nationality gets another (whatever the detector called it), a person a name of as many words (of
    ``gender``), a phone number or code the same shape."""
    found = nationality_form(original) if kind != "PERSON" else None
    if found is not None:
        choices = other_nationalities(*found)
        return lambda fake: fake.random_element(choices)
    if kind == "PERSON":
        count, first_names = len(words(original)), gender or name_gender(original)
        return lambda fake: person_name(fake, count, first_names)
    if kind in SHAPED:
        return lambda fake: same_shape(fake.random, original)
    return FAKES.get(kind)


def _reveals(original: str, stand_in: str, label: str, taken: frozenset[str] = frozenset()) -> bool:
    """Whether a stand-in gives the original away: equal to it, or (a person) sharing a name part with it or with
    ``taken`` (the document's other persons), or, word for word, an initial (its initials form, "J. Smith" for
    "J. Smith", would name the original's initials)."""
    if stand_in.casefold() == original.casefold():
        return True
    if _kind(label) != "PERSON":
        return False
    mine, theirs = ([t.text.casefold() for t in words(name)] for name in (original, stand_in))
    if set(theirs) & (set(mine) | taken):
        return True
    return len(mine) == len(theirs) and any(a[0] == b[0] for a, b in zip(mine, theirs, strict=True))


def _stand_ins(text: str, regions: Sequence[Span], setting: RedactSetting, key: rng.Key, owner: str | None
               ) -> list[str]:
    """Each region's pseudonym: the document's persons as one set of people, its dates moved by its one offset
    (``dates: fake`` or a date not read: a fake date), any other string its own draw in the original's case."""
    persons = {region: mention(text, region) for region in regions if _kind(region.label) == "PERSON"}
    taken = frozenset(word for m in persons.values() for word in m.names)  # never a stand-in's: real names here
    people = People(lambda name, gender: pseudonym_of("PERSON", key, owner, name, gender, taken),
                    list(persons.values()))
    days = offset_days(key, owner, setting.date_shift_days) if setting.dates != "fake" else 0
    out = []
    for region in regions:
        original = text[region.start:region.end]
        if region in persons:
            stand_in = people.stand_in(persons[region])
            if _reveals(original, stand_in, region.label, taken):  # forms put together from several draws
                stand_in = f"[{region.label}]"
        elif days and _kind(region.label) == "DATE" and (
                shifted := moved(original, days, PRECISION[setting.dates], setting.day_first)) is not None:
            stand_in = shifted
        else:
            stand_in = like_case(original, pseudonym_of(region.label, key, owner, original))
        out.append(stand_in)
    return out


def _operated(operator: str, region: Span, text: str, setting: RedactSetting, key: rng.Key, owner: str | None
              ) -> str:
    """What ``operator`` (not ``pseudonym``) writes in place of ``region`` (:mod:`.operators`)."""
    if operator == "placeholder":
        return setting.placeholder.format(label=region.label)
    original = text[region.start:region.end]
    return digest(key, owner, original) if operator == "hash" else mask(original)


def redact_text(text: str, spans: Sequence[Span], setting: RedactSetting, key: rng.Key, doc_id: str,
                record: list[tuple[str, str, str]] | None = None,
                placed: list[Span] | None = None) -> tuple[str, int]:
    """One document redacted; returns the text and the number of regions replaced. ``record``, when given,
    receives ``(label, pseudonym, original)`` per replaced region (the pseudonym vault's entries); ``placed`` where
    each stand-in lies in the returned text, with its region's type (what a mechanism run after redaction must leave
    alone; what a served answer lists as replaced)."""
    regions = outermost(consistent_spans(text, spans))
    owner = doc_id if setting.scope == "document" else None
    operators = [operator_of(setting, region.label) for region in regions]
    drawn = iter(_stand_ins(text, [r for r, op in zip(regions, operators, strict=True) if op == "pseudonym"],
                            setting, key, owner))  # a document's persons and dates drawn together, as one set
    stand_ins = [next(drawn) if op == "pseudonym" else _operated(op, region, text, setting, key, owner)
                 for region, op in zip(regions, operators, strict=True)]
    pieces, cursor, length = [], 0, 0
    for region, stand_in, op in zip(regions, stand_ins, operators, strict=True):
        if record is not None and op == "pseudonym":
            record.append((region.label, stand_in, text[region.start:region.end]))
        pieces += [text[cursor:region.start], stand_in]
        length += region.start - cursor
        if placed is not None:
            placed.append(Span(length, length + len(stand_in), region.label))
        length += len(stand_in)
        cursor = region.end
    pieces.append(text[cursor:])
    return "".join(pieces), len(regions)


def redact(
    texts: Sequence[str], doc_ids: Sequence[str], spans: Sequence[Sequence[Span]], setting: RedactSetting, key: rng.Key,
    vault: dict[str, list[tuple[str, str, str]]] | None = None, owners: Sequence[str] | None = None,
    placed: list[list[Span]] | None = None,
) -> tuple[list[str], dict[str, float]]:
    """Redact every document (row order kept); metrics: spans given, regions replaced, documents touched.
    ``vault``, when given, receives each document's ``(label, pseudonym, original)`` entries by id; ``placed``, per
    document, where its stand-ins lie in its output (:func:`redact_text`). ``owners`` names what each document's
    pseudonyms are keyed by (``Documents.draw_names``: id and text digest); default its id."""
    out, replaced = [], []
    for text, doc_id, owner, doc_spans in zip(texts, doc_ids, owners or doc_ids, spans, strict=True):
        record = vault.setdefault(doc_id, []) if vault is not None else None
        where: list[Span] | None = [] if placed is not None else None
        redacted, count = redact_text(text, doc_spans, setting, key, owner, record, where)
        if placed is not None and where is not None:
            placed.append(where)
        out.append(redacted)
        replaced.append(count)
    n = max(len(texts), 1)
    return out, {"spans_given": float(sum(len(s) for s in spans)), "regions_replaced": float(sum(replaced)),
                 "docs_redacted_fraction": sum(1 for c in replaced if c) / n}
