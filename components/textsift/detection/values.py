"""Slot values of the synthetic DPER sentences, with their (nested) spans (METHODS.md §4.1).

A sentence is built as a list of chunks and spans over chunk ranges, so re-casing chunks later
never moves an offset. Every draw uses the Faker instance the sentence has just seeded
(``Builder.r`` is its ``random.Random``), so values depend only on the sentence's seed; Faker
formatters that read the clock (dates of birth, "this year") are never called.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import date

from faker import Faker

from textsift.corpus import Span
from textsift.detection.lexicon import SLOTS, LocaleData, Template, tables

# Faker formatters of national numbers; es_ES's nif/nie/nuss draw from the global ``random`` module
# (not the seeded generator), so Spanish DNI/NIE numbers are made in ``_national_number``.
_SSN_METHODS = {"en_US": ("ssn",), "en_GB": ("ssn",), "de_DE": ("kvnr", "vat_id"), "fr_FR": ("ssn",),
                "nl_NL": ("ssn",), "it_IT": ("ssn", "cie")}
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_PATTERNS = {
    "LICENCE": ("?#######", "?????######??#??", "?###-###-##-###-#", "##########", "?##-###-###", "??#####??"),
    "ORDER": ("#########", "ORD-####-######", "??-########", "#??##-####", "W#########", "###-#######-#######"),
    "MRN": ("########", "##-##-####", "M#######", "#######"),
}
_ID_KINDS = ("IBAN", "SSN", "PASSPORT", "LICENCE", "ORDER", "MRN", "CARD", "PLATE")
_HONORIFICS = ("Dr. ", "Mr ", "Mrs ", "Ms. ", "Prof. ", "Mr. ", "Miss ")
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "ten", "twelve", "a dozen", "several")
DATE_RANGE = (date(2000, 1, 1), date(2025, 12, 31))
BIRTH_RANGE = (date(1935, 1, 1), date(2007, 12, 31))


class Builder:
    """A sentence under construction: chunks, spans over chunk ranges, and its people."""

    __slots__ = ("fake", "loc", "r", "chunks", "spans", "people")

    def __init__(self, fake: Faker, loc: LocaleData) -> None:
        self.fake = fake
        self.loc = loc
        self.r = fake.random
        self.chunks: list[str] = []
        self.spans: list[tuple[int, int, str]] = []
        self.people: dict[int, tuple[str, str, str]] = {}

    def lit(self, text: str) -> None:
        """Append literal text as a chunk outside any new span (empty text adds nothing)."""
        if text:
            self.chunks.append(text)

    def mark(self) -> int:
        """Where a span that starts now begins (a chunk index), for :meth:`close` once its chunks are in."""
        return len(self.chunks)

    def close(self, start: int, label: str) -> None:
        """Record a ``label`` span over the chunks added since ``start`` (a :meth:`mark`): it may nest entities."""
        self.spans.append((start, len(self.chunks), label))

    def entity(self, label: str, text: str) -> None:
        """Append ``text`` as one chunk that is a ``label`` span of its own."""
        self.chunks.append(text)
        self.spans.append((len(self.chunks) - 1, len(self.chunks), label))

    def article(self, text: str) -> str:
        """Turn a preceding " a " into " an " before a vowel; returns ``text`` unchanged."""
        if self.chunks and self.chunks[-1].endswith((" a ", "\na ")) and text[:1].lower() in "aeiou":
            self.chunks[-1] = self.chunks[-1][:-2] + "an "
        elif self.chunks and self.chunks[-1] == "a " and text[:1].lower() in "aeiou":
            self.chunks[-1] = "an "
        return text

    def ends_with(self, *suffixes: str) -> bool:
        """Whether the last chunk ends with one of ``suffixes`` (lower-case), to avoid "the the" and double titles."""
        return bool(self.chunks) and self.chunks[-1].lower().endswith(suffixes)

    def person(self, k: int) -> tuple[str, str, str]:
        """Person ``k`` of the sentence as (first name, middle initial or "", surname), drawn once."""
        if k not in self.people:
            r, loc = self.r, self.loc
            last = r.choice(loc.lasts)
            if r.random() < (0.5 if loc.locale == "es_ES" else 0.05):
                last += (" " if loc.locale == "es_ES" else "-") + r.choice(loc.lasts)
            middle = f"{r.choice('ABCDEFGHJKLMNPRSTW')}." if loc.locale.startswith("en") and r.random() < 0.1 else ""
            self.people[k] = (r.choice(loc.firsts), middle, last)
        return self.people[k]

    def finish(self) -> tuple[str, tuple[Span, ...]]:
        """The text and its character spans, sorted by (start, -end, label), duplicates merged."""
        offsets = [0]
        for chunk in self.chunks:
            offsets.append(offsets[-1] + len(chunk))
        spans = {Span(offsets[a], offsets[z], label) for a, z, label in self.spans}
        return "".join(self.chunks), tuple(sorted(spans, key=lambda s: (s.start, -s.end, s.label)))


def slug(text: str) -> str:
    """Lower-case ASCII letters and digits of ``text`` ("Zoë de Wit" -> "zoedewit")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]", "", ascii_text) or "user"


def city(b: Builder) -> str:
    """A city of the sentence's locale: sometimes a real one from the lexicon, else Faker's list or ``city()``."""
    r, loc = b.r, b.loc
    if loc.real_cities and r.random() < (0.3 if loc.cities else 0.5):
        return r.choice(loc.real_cities)
    return r.choice(loc.cities) if loc.cities else b.fake.city()


def date_text(b: Builder, first: date, last: date) -> str:
    """A date between ``first`` and ``last`` in one of the locale's (or a universal) formats."""
    r, loc = b.r, b.loc
    d = date.fromordinal(r.randint(first.toordinal(), last.toordinal()))
    lists = tables().lists
    fmt, months = (r.choice(loc.dates), loc.months) if r.random() < 0.7 else (
        r.choice(lists["date any"]), lists["month en"])
    month = months[d.month - 1]
    suffix = "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
    return fmt.format(d=d.day, dd=f"{d.day:02}", m=d.month, mm=f"{d.month:02}", yyyy=d.year,
                      yy=f"{d.year % 100:02}", month=month, mon=month[:3], th=f"{d.day}{suffix}")


def id_text(b: Builder, kind: str) -> str:
    """An identifying code: IBAN, SSN (the locale's national number), PASSPORT, CARD, PLATE, ..."""
    fake, r = b.fake, b.r
    if kind in ("IBAN", "CARD"):
        code = fake.iban() if kind == "IBAN" else fake.credit_card_number()
        grouped = r.random() < 0.4 and len(code) >= 16
        return " ".join(code[k:k + 4] for k in range(0, len(code), 4)) if grouped else code
    if kind == "SSN":
        return _national_number(b)
    if kind == "PASSPORT":
        return fake.passport_number()
    if kind == "PLATE":
        return fake.license_plate()
    return fake.bothify(r.choice(_PATTERNS[kind]), letters="ABCDEFGHJKLMNPRSTUVWXYZ")


def _national_number(b: Builder) -> str:
    """The locale's social-security-like number (Spain: a DNI or NIE with its check letter)."""
    r = b.r
    if b.loc.locale != "es_ES":
        return str(getattr(b.fake, r.choice(_SSN_METHODS[b.loc.locale]))())
    kind = r.randint(0, 3)  # 0-2: NIE X/Y/Z, 3: DNI
    if kind == 3:
        number = r.randint(0, 99_999_999)
        return f"{number:08d}{_DNI_LETTERS[number % 23]}"
    number = r.randint(0, 9_999_999)
    return f"{'XYZ'[kind]}{number:07d}{_DNI_LETTERS[(kind * 10_000_000 + number) % 23]}"


def _institution(b: Builder, kind: str) -> None:
    """An ORG from a form; ``{CITY}`` nests a LOC, ``{LAST}``/``{FIRST}`` are unlabelled."""
    r = b.r
    form: Template = r.choice(b.loc.forms[kind])
    if isinstance(form[0], str) and " of " in form[0] and r.random() < 0.6 and not b.ends_with("the "):
        b.lit("the ")
    start = b.mark()
    for part in form:
        if isinstance(part, str):
            b.lit(part)
        elif part[0] == "CITY":
            b.entity("LOC", city(b))
        else:
            b.lit(r.choice(b.loc.lasts if part[0] == "LAST" else b.loc.firsts))
    b.close(start, "ORG")


def _person(b: Builder, k: int) -> None:
    first, middle, last = b.person(k)
    r = b.r
    if r.random() < 0.08 and not b.ends_with("dr. ", "mr ", "ms ", "nurse "):
        b.lit(r.choice(_HONORIFICS))
    u = r.random()
    name = f"{last}, {first}" if u < 0.05 else f"{first[0]}. {last}" if u < 0.1 else " ".join(
        p for p in (first, middle, last) if p)
    b.entity("PERSON", name)


def _loc(b: Builder, k: int) -> None:
    u = b.r.random()
    if u < 0.6 or (0.7 <= u < 0.82 and not b.loc.regions):
        b.entity("LOC", city(b))
    elif u < 0.7:
        b.entity("LOC", b.r.choice(b.loc.countries))
    elif u < 0.82:
        b.entity("LOC", b.r.choice(b.loc.regions))
    else:
        _address(b, k)


def _address(b: Builder, _: int) -> None:
    """A street address (LOC) with its city nested (LOC)."""
    r, fake = b.r, b.fake
    start = b.mark()
    b.lit(fake.street_address().replace("\n", ", ") + ", ")
    postcode = fake.postcode() if r.random() < 0.6 else ""
    if b.loc.locale.startswith("en"):
        b.entity("LOC", city(b))
        b.lit(f" {postcode}" if postcode else "")
    else:
        b.lit(f"{postcode} " if postcode else "")
        b.entity("LOC", city(b))
    b.close(start, "LOC")


def _org(b: Builder, k: int) -> None:
    u = b.r.random()
    if u < 0.45:
        b.entity("ORG", b.fake.company())
    elif u < 0.87:
        _institution(b, "uni_form" if u < 0.6 else "hospital_form" if u < 0.72 else "civic_form")
    else:
        name = b.r.choice(tables().lists["org"])
        if name.startswith("the "):
            b.lit("" if b.ends_with("the ") else "the ")
            name = name[4:]
        b.entity("ORG", name)


def _degree_text(b: Builder) -> str:
    r, lists = b.r, tables().lists
    u = r.random()
    if u < 0.6:
        return f"{r.choice(lists['degree_level'])} in {r.choice(lists['degree_field'])}"
    if u < 0.8:
        return f"degree in {r.choice(lists['degree_field'])}"
    return r.choice(lists["degree_standalone"])


def _edu(b: Builder, _: int) -> None:
    """A qualification (EDU), in 45% of cases "from"/"at" a school (ORG, maybe nesting a LOC)."""
    start = b.mark()
    b.lit(b.article(_degree_text(b)))
    if b.r.random() < 0.45:
        b.lit(b.r.choice((" from ", " at ")))
        _institution(b, "uni_form")
    b.close(start, "EDU")


def _email(b: Builder, _: int) -> None:
    r, loc = b.r, b.loc
    if 1 in b.people and r.random() < 0.6:
        first, _middle, last = b.people[1]
    else:
        first, last = r.choice(loc.firsts), r.choice(loc.lasts)
    f, s, n = slug(first), slug(last), r.randint(1, 99)
    local = r.choice((f"{f}.{s}", f"{f[0]}{s}", f"{f}_{s}", f"{f}{n}", f"{s}.{f}", f"{f}.{s}{n + 1950}"))
    domain = b.fake.free_email_domain() if r.random() < 0.6 else f"{slug(r.choice(loc.lasts))}.{r.choice(loc.domains)}"
    b.entity("EMAIL", f"{local}@{domain}")


def _url(b: Builder, _: int) -> None:
    r, loc = b.r, b.loc
    first, _middle, last = b.people[1] if 1 in b.people and r.random() < 0.5 else ("", "", r.choice(loc.lasts))
    f, s = slug(first) if first else "", slug(last)
    u = r.random()
    if u < 0.45:
        handle = r.choice((f"{f}-{s}-{r.randint(100, 9999)}" if f else s, f"{f}{s}", f"{s}{r.randint(1, 99)}"))
        text = ("https://" if r.random() < 0.5 else "") + r.choice(tables().lists["url_site"]) + handle
    else:
        host = f"{f}{s}" if f and r.random() < 0.5 else s
        text = f"https://www.{host}.{r.choice(loc.domains)}" if u < 0.8 else f"{host}.{r.choice(loc.domains)}"
        text += r.choice(("", "/", "/about", "/contact", "/blog", f"/p/{r.randint(10, 9999)}"))
    b.entity("URL", text)


def _order(b: Builder, _: int) -> None:
    if b.r.random() < 0.2 and not b.ends_with("#"):
        b.lit("#")
    b.entity("ID", id_text(b, "ORDER"))


def _any_id(b: Builder, k: int) -> None:
    kind = b.r.choice(_ID_KINDS)
    _order(b, k) if kind == "ORDER" else b.entity("ID", id_text(b, kind))


def _distractor(name: str) -> Callable[[Builder, int], None]:
    """A renderer for an unlabelled slot: a word-list entry or a number that is not personal data."""
    def render(b: Builder, _: int) -> None:
        r = b.r
        a, c = r.choice((r.randint(1, 99), r.randint(100, 2500))), r.randint(0, 99)
        made = {
            "PRICE": lambda: r.choice((f"${a}.{c:02}", f"€{a}", f"£{a}.{c:02}", f"{a},{c:02} €", f"{a} EUR", f"${a}")),
            "COUNT": lambda: str(r.randint(2, 48)) if r.random() < 0.7 else r.choice(_NUMBER_WORDS),
            "NUM": lambda: str(r.randint(2, 120)),
            "PERCENT": lambda: f"{r.randint(5, 95)}%",
            "DURATION": lambda: f"{r.randint(2, 30)} {r.choice(('days', 'weeks', 'hours', 'months', 'minutes'))}",
            "DOSE": lambda: f"{r.choice((5, 10, 20, 25, 50, 100, 250, 500))} {r.choice(('mg', 'mg', 'ml'))}",
            "TIME": lambda: r.choice((f"{r.randint(7, 18)}:{r.choice(('00', '15', '30', '45'))}",
                                      f"{r.randint(1, 12)}{r.choice(('pm', 'am', ' pm'))}")),
            "VERSION": lambda: f"{r.choice(('v', 'version ', ''))}{r.randint(1, 15)}.{r.randint(0, 9)}.{c % 21}",
            "RATING": lambda: r.choice((f"{r.randint(1, 5)}/5", f"{r.randint(1, 5)} stars", f"{r.randint(1, 10)}/10")),
            "TEMP": lambda: f"{r.randint(36, 39)}.{r.randint(0, 9)}{r.choice((' C', '°C', ' degrees'))}",
        }
        b.lit(made[name]() if name in made else b.article(r.choice(tables().lists[name.lower()])))
    return render


def _leaf(label: str, make: Callable[[Builder], str]) -> Callable[[Builder, int], None]:
    return lambda b, _k: b.entity(label, make(b))


RENDER: dict[str, Callable[[Builder, int], None]] = {
    **{name: _distractor(name) for name, label in SLOTS.items() if label is None},
    **{kind: _leaf("ID", lambda b, kind=kind: id_text(b, kind)) for kind in _ID_KINDS},
    "PERSON": _person, "FIRST": lambda b, k: b.entity("PERSON", b.person(k)[0]),
    "SURNAME": lambda b, k: b.entity("PERSON", b.person(k)[2]),
    "LOC": _loc, "CITY": _leaf("LOC", city), "ADDRESS": _address,
    "COUNTRY": _leaf("LOC", lambda b: b.r.choice(b.loc.countries)),
    "ORG": _org, "COMPANY": _leaf("ORG", lambda b: b.fake.company()),
    "UNI": lambda b, _k: _institution(b, "uni_form"), "HOSPITAL": lambda b, _k: _institution(b, "hospital_form"),
    "JOB": _leaf("JOB", lambda b: b.article(b.r.choice(b.loc.jobs))), "EDU": _edu,
    "DEGREE": _leaf("EDU", lambda b: b.article(_degree_text(b))),
    "DATE": _leaf("DATE", lambda b: date_text(b, *DATE_RANGE)),
    "DOB": _leaf("DATE", lambda b: date_text(b, *BIRTH_RANGE)),
    "EMAIL": _email, "PHONE": _leaf("PHONE", lambda b: b.fake.phone_number()), "URL": _url,
    "ID": _any_id, "ORDER": _order,
}
