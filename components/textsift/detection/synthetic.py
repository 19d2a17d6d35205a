"""Seeded synthetic sentences with nested privacy-entity labels: training data for DPER.

DPER (METHODS.md §4.1) recognizes nested spans: "Lyon" (LOC) inside "University of Lyon" (ORG)
inside "PhD in Chemistry from the University of Lyon" (EDU). This module writes such sentences
from the templates and word lists shipped in ``templates.txt`` (clinical notes, support tickets,
reviews, social posts, biographies, legal and office text) and values drawn with Faker in seven
locales, with exact character offsets.

Label conventions:
    PERSON: a name, full or partial (a bare surname or first name that refers back to a person is
        labelled too); honorifics such as "Dr. " stay outside. Names inside organization names,
        e-mail addresses or URLs are not PERSON.
    LOC: a city, region, country or street address (an address nests its city).
    ORG: a company or institution; one named after a city nests the city.
    JOB: a job title. EDU: an educational qualification; "<degree> from <school>" nests the school.
    DATE: a calendar date or month (weekdays are not dates). EMAIL, PHONE, URL: whole addresses.
    ID: identifying codes: IBAN, social-security-like, passport, licence, plate, card, record and
        order numbers.
Product names, capitalised common phrases, prices, counts, doses, times, versions and ratings are
unlabelled distractors; about ``NO_ENTITY_RATE`` of the sentences have no entity at all. Casing
(lower, UPPER, Title) is varied per sentence and per entity, and so is the final punctuation.

Reproducible: sentence ``i`` is a pure function of (seed, i), whatever the batch it is made in.
Its locale comes from ``rng.stable_key(seed, STAGE, "locale/<i>")``; that locale's Faker (one per
thread, reused) is re-seeded with ``rng.stable_key(seed, STAGE, "<i>")`` before the sentence's
first draw, and every draw of the sentence comes from that Faker's generator.
"""

from __future__ import annotations

import threading

from faker import Faker

from textsift.detection.labelled import LabelledText
from textsift.detection.lexicon import locale_data, tables
from textsift.detection.values import RENDER, Builder
from textsift.rng import stable_key

STAGE = "detection.synthetic"
LOCALES = (("en_US", 3), ("en_GB", 2), ("de_DE", 1), ("fr_FR", 1), ("nl_NL", 1), ("es_ES", 1), ("it_IT", 1))
NO_ENTITY_RATE = 0.15
ENTITY_CASE_RATE = 0.1  # share of (outermost) entities re-cased
_SENTENCE_CASES = ((0.07, str.lower), (0.11, str.upper), (0.14, str.title))  # cumulative shares
_ENDINGS = ("!", "!!", "...", "", "?", " :)", " 🙂", "..", ".", " lol")
_BULLETS = ("- ", "> ", "* ", "• ", "Re: ")
_THREAD = threading.local()


def _faker(locale: str) -> Faker:
    """This thread's Faker for ``locale`` (re-seeded by every sentence before use)."""
    cache = _THREAD.__dict__.setdefault("fakers", {})
    if locale not in cache:
        cache[locale] = Faker(locale)
    return cache[locale]


def _locale_of(seed: int, i: int) -> str:
    u = stable_key(seed, STAGE, f"locale/{i}") % sum(w for _, w in LOCALES)
    for locale, weight in LOCALES:
        if u < weight:
            return locale
        u -= weight
    raise AssertionError("unreachable")


def _punctuate(b: Builder) -> None:
    """Vary the sentence's final punctuation (a quarter of the sentences)."""
    r = b.r
    if r.random() >= 0.25 or not b.chunks:
        return
    if any(end == len(b.chunks) for _, end, _ in b.spans):  # ends inside an entity: append
        b.lit(r.choice(("!", ".", " :)", "?", "!!")))
        return
    last = b.chunks[-1]
    if last.endswith(".") and not last.endswith(".."):
        b.chunks[-1] = last[:-1] + r.choice(_ENDINGS)
    elif last.endswith(("!", "?")):
        b.chunks[-1] = last.rstrip("!?") + r.choice(("!", "?", "!!!", "?!", "."))


def _recase(b: Builder) -> None:
    """Re-case some outermost entities, then sometimes the whole sentence (chunk by chunk).

    Casing is applied per chunk so offsets stay exact even where a letter changes length
    ("ß".upper() == "SS").
    """
    r = b.r
    for start, end, _ in b.spans:
        if r.random() < ENTITY_CASE_RATE and not any(
            s <= start and end <= e and (s, e) != (start, end) for s, e, _ in b.spans
        ):
            case = r.choice((str.lower, str.lower, str.upper, str.title))
            b.chunks[start:end] = [case(c) for c in b.chunks[start:end]]
    u = r.random()
    for share, case in _SENTENCE_CASES:
        if u < share:
            b.chunks = [case(c) for c in b.chunks]
            return


def _sentence(seed: int, i: int) -> LabelledText:
    locale = _locale_of(seed, i)
    fake = _faker(locale)
    fake.seed_instance(stable_key(seed, STAGE, str(i)))
    b = Builder(fake, locale_data(locale))
    r = b.r
    shipped = tables()
    template = r.choice(shipped.none if r.random() < NO_ENTITY_RATE else shipped.entity)
    if r.random() < 0.04:
        b.lit(r.choice(_BULLETS))
    for part in template:
        if isinstance(part, str):
            b.lit(part)
        else:
            RENDER[part[0]](b, part[1])
    _punctuate(b)
    _recase(b)
    text, spans = b.finish()
    return LabelledText(text, spans)


def generate(n: int, seed: int, start: int = 0) -> list[LabelledText]:
    """Sentences ``start`` .. ``start + n - 1`` of the synthetic stream of ``seed``.

    Args:
        n: How many sentences (>= 0).
        seed: Root seed; sentence ``i`` depends only on (seed, i), so ``generate(1, s, start=i)``
            equals element ``i`` of ``generate(i + 1, s)``.
        start: Index of the first sentence (>= 0).

    Returns:
        Labelled sentences with exact, possibly nested spans of ``ENTITY_TYPES``.

    Raises:
        ValueError: ``n`` or ``start`` is negative.
    """
    if n < 0 or start < 0:
        raise ValueError(f"n and start must be >= 0 (got n={n}, start={start})")
    return [_sentence(seed, i) for i in range(start, start + n)]
